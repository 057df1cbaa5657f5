/**
 * apsup tasks submit|list|show|cancel|delete|prune|resume|worker
 */
import { DATABASE_URL_VARIABLE, parseDatabaseUrl } from '../config/database-url.ts';
import { createLogger } from '../logging.ts';
import type { BaseStore } from '../store/base-store.ts';
import { openStore } from '../store/open.ts';
import { databaseUrlOf } from '../runtime/runtime.ts';
import { parseTaskConfig } from '../tasks/config.ts';
import { loadTaskRegistry } from '../tasks/load.ts';
import { TaskRunner } from '../tasks/task-runner.ts';
import { TaskService } from '../tasks/service.ts';
import { TaskStore, type TaskState } from '../tasks/task-store.ts';

export const TASKS_USAGE = `usage:
  apsup tasks submit <type> --payload '<json>' [--dedupe-key K] [--timeout-seconds S] [--handler-version V]
  apsup tasks list [--state S] [--before ID] [--limit N] [--json]
  apsup tasks show <id>
  apsup tasks cancel <id>
  apsup tasks delete <id>
  apsup tasks prune --older-than-days D
  apsup tasks resume <id>
  apsup tasks worker           run a task worker until SIGINT/SIGTERM (apsup run includes one)`;

export interface TasksArgs {
  positionals: string[];
  payload?: string;
  dedupeKey?: string;
  timeoutSeconds?: string;
  handlerVersion?: string;
  state?: string;
  before?: string;
  limit?: string;
  olderThanDays?: string;
  json?: boolean;
}

function id(value: string | undefined): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`a task id is a positive integer, got ${JSON.stringify(value)}`);
  return n;
}

export async function tasksCommand(args: TasksArgs): Promise<number> {
  const [action, arg] = args.positionals;
  const config = parseTaskConfig(process.env);
  const target = parseDatabaseUrl(process.env[DATABASE_URL_VARIABLE]);
  const store = openStore(target) as BaseStore;
  const tasks = new TaskStore(store);
  const registry = await loadTaskRegistry(config.tasksModule);
  const service = new TaskService(tasks, registry, config);
  const out = (value: unknown) => console.log(JSON.stringify(value, null, 2));
  try {
    switch (action) {
      case 'submit': {
        if (!arg) throw new Error('submit needs a task type');
        let payload: unknown;
        try {
          payload = JSON.parse(args.payload ?? '{}');
        } catch {
          throw new Error('--payload must be JSON');
        }
        out(await service.submit({
          taskType: arg,
          payload,
          dedupeKey: args.dedupeKey,
          timeoutMs: args.timeoutSeconds ? Number(args.timeoutSeconds) * 1000 : undefined,
          handlerVersion: args.handlerVersion !== undefined ? Number(args.handlerVersion) : undefined,
        }));
        return 0;
      }
      case 'list': {
        const page = await tasks.list({ beforeTaskId: args.before ? id(args.before) : null, limit: args.limit ? Number(args.limit) : 50, state: (args.state as TaskState) ?? null });
        if (args.json) out(page);
        else {
          for (const t of page.tasks) {
            const progress = t.progressCurrent !== null ? ` ${t.progressCurrent}/${t.progressTotal ?? '?'}` : '';
            console.log(`${String(t.taskId).padStart(6)}  ${t.state.padEnd(9)} ${t.taskType}@v${t.handlerVersion}  attempts=${t.attemptCount}${progress}${t.progressMessage ? `  "${t.progressMessage}"` : ''}`);
          }
          if (page.nextBeforeTaskId) {
            const keep = `${args.state ? ` --state ${args.state}` : ''}${args.limit ? ` --limit ${args.limit}` : ''}`;
            console.log(`more: apsup tasks list --before ${page.nextBeforeTaskId}${keep}`);
          }
        }
        return 0;
      }
      case 'show': {
        const task = await tasks.read(id(arg));
        if (!task) {
          console.error(`apsup: task ${arg} does not exist`);
          return 1;
        }
        out(task);
        return 0;
      }
      case 'cancel':
        out(await tasks.cancel(id(arg)));
        return 0;
      case 'delete':
        await tasks.delete(id(arg));
        out({ taskId: id(arg), deleted: true });
        return 0;
      case 'prune': {
        const days = Number(args.olderThanDays);
        if (!Number.isFinite(days) || days < 0) throw new Error('--older-than-days must be a non-negative number');
        out({ deleted: await tasks.prune(new Date(Date.now() - days * 86_400_000), 10_000) });
        return 0;
      }
      case 'resume':
        out(await service.resume(id(arg)));
        return 0;
      case 'worker': {
        const logger = createLogger({ name: 'apsup-tasks' });
        const runner = new TaskRunner(tasks, registry, config, databaseUrlOf(target), logger);
        // Signals are handled from before the start-up sweep: a SIGTERM during it stops cleanly.
        const stopRequested = new Promise<void>((resolve) => {
          process.once('SIGINT', () => resolve());
          process.once('SIGTERM', () => resolve());
        });
        const keepAlive = setInterval(() => undefined, 1 << 30);
        await runner.start();
        logger.info({ workerId: runner.workerId, capacity: config.capacity }, 'task worker running');
        await stopRequested;
        clearInterval(keepAlive);
        await runner.stop();
        return 0;
      }
      default:
        console.error(TASKS_USAGE);
        return 2;
    }
  } finally {
    await store.close();
  }
}
