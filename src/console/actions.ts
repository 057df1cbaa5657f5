/**
 * The console's actions, each through the same operation as its CLI command: trigger and mark
 * dirty (pc_aps_accept_request / pc_aps_mark_dirty, no leadership needed, RFC 3; refused during
 * maintenance), cancel / resume (TaskService, as `apsup tasks cancel|resume`), delete
 * (pc_task_delete), maintenance on/off (pc_aps_set_maintenance) and the task claim cap
 * (pc_task_set_capacity, ADR T6). After a committed intent the wake-up channel is told, as the
 * CLI does; mounted in `apsup run`, the runtime's own trigger wakes the local leader too.
 */
import { createLogger } from '../logging.ts';
import { loadHostTaskRegistry } from '../child/host-import.ts';
import { publishOnce } from '../notify/start.ts';
import type { Runtime } from '../runtime/runtime.ts';
import type { TaskConfig } from '../tasks/config.ts';
import { TaskService } from '../tasks/service.ts';
import { BadRequest } from './task-view.ts';
import { NotFound } from './family-view.ts';
import type { ConsoleSource } from './source.ts';

export interface ActionContext {
  source: ConsoleSource;
  taskConfig: TaskConfig;
  /** The host's runtime when mounted in `apsup run`. */
  runtime?: Runtime | null;
  env?: NodeJS.ProcessEnv;
}

export class ConsoleActions {
  private service: Promise<TaskService> | null = null;

  constructor(private readonly c: ActionContext) {}

  private taskService(): Promise<TaskService> {
    this.service ??= loadHostTaskRegistry(this.c.taskConfig.tasksModule).then((registry) => new TaskService(this.c.source.tasks, registry, this.c.taskConfig));
    this.service.catch(() => {
      this.service = null;
    });
    return this.service;
  }

  async intent(kind: 'trigger' | 'mark-dirty', family: string, scopeId: string) {
    const f = this.c.source.family(family);
    if (!f) throw new NotFound(`unknown family ${JSON.stringify(family)}`);
    if (scopeId.trim() === '' || scopeId.length > 191) throw new BadRequest('the scope id must be 1..191 characters and not blank');
    const { runtime, source } = this.c;
    const binding = f.registration.bindingName;
    const result = runtime
      ? kind === 'trigger'
        ? await runtime.trigger(family, scopeId)
        : await runtime.markDirty(family, scopeId)
      : kind === 'trigger'
        ? await source.store.acceptRequest(binding, scopeId)
        : await source.store.markDirty(binding, scopeId);
    await publishOnce(
      this.c.env ?? process.env,
      source.config.database,
      createLogger({ level: 'silent' }),
      kind === 'trigger' ? 'request' : 'dirty',
      kind === 'trigger' ? `${family}\t${result.pendingSequence}` : family,
    ).catch(() => undefined);
    return { status: 'accepted', family, ...result };
  }

  async cancel(taskId: number) {
    return { taskId, ...(await (await this.taskService()).cancel(taskId)) };
  }

  async resume(taskId: number) {
    return (await this.taskService()).resume(taskId);
  }

  async delete(taskId: number) {
    await this.c.source.tasks.delete(taskId);
    return { taskId, deleted: true };
  }

  async maintenance(on: boolean) {
    const state = await this.c.source.store.setMaintenance(on);
    return { maintenance: state.maintenance, changed: state.changed, mode: state.mode, dbNow: state.dbNow.toISOString() };
  }

  async capacity(capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1 || capacity > 10_000) throw new BadRequest('capacity must be an integer in 1..10000');
    return this.c.source.tasks.setCapacity(capacity);
  }
}
