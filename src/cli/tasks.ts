/**
 * apsup tasks submit|list|show|cancel|delete|prune|resume|set-capacity|worker
 * Errors print one line (`apsup: ...`); exit codes: 0 done, 1 refused by the database or failed
 * (no such task, an active task, a superseded resume, an unreachable database), 2 invalid command
 * or input (nothing written).
 */
import { readSettings } from '../config/settings.ts';
import { createLogger } from '../logging.ts';
import type { BaseStore } from '../store/base-store.ts';
import { openHostStore, openStore } from '../store/open.ts';
import { childDatabase } from '../runtime/child-database.ts';
import { resolveSessionAccounts } from '../store/session-accounts.ts';
import { transactionBoundFromEnv } from '../store/mysql/transaction-bound.ts';
import { logFencing } from './fencing-report.ts';
import { parseTaskConfig } from '../tasks/config.ts';
import { loadHostTaskRegistry } from '../child/host-import.ts';
import { TaskRunner } from '../tasks/task-runner.ts';
import { publishOnce } from '../notify/start.ts';
import { TaskService } from '../tasks/service.ts';
import { TERMINAL_STATES, TaskStore, type TaskState } from '../tasks/task-store.ts';
import { reportFailure } from './errors.ts';
import { requireMigratedSchema } from './schema-check.ts';
import { ShutdownSignals } from './shutdown.ts';
import { killManagedChildren } from '../child/managed-child.ts';
import { TasksUsageError, daysOption, intOption, readPayload, timeoutOption } from './tasks-input.ts';

export const TASKS_USAGE = `usage:
  apsup tasks submit <type> [--payload '<json>' | --payload - | --payload-file <path>]
                     [--dedupe-key K] [--timeout-seconds S] [--handler-version V]
  apsup tasks list [--state S] [--before ID] [--limit N] [--json]
  apsup tasks show <id>
  apsup tasks cancel <id>
  apsup tasks delete <id>
  apsup tasks prune --older-than-days D
  apsup tasks resume <id>
  apsup tasks set-capacity <n>  the database cap of running tasks across all processes (1..10000; default 4)
  apsup tasks worker           run a task worker until SIGINT/SIGTERM (apsup run includes one)
  exit codes: 0 done, 1 refused by the database or failed, 2 invalid command or input`;

/** The string options of `apsup tasks` (main.ts joins negative-number values to them). */
export const TASKS_STRING_OPTIONS = [
  'payload',
  'payload-file',
  'dedupe-key',
  'timeout-seconds',
  'handler-version',
  'state',
  'before',
  'limit',
  'older-than-days',
] as const;

export interface TasksArgs {
  positionals: string[];
  payload?: string;
  payloadFile?: string;
  dedupeKey?: string;
  timeoutSeconds?: string;
  handlerVersion?: string;
  state?: string;
  before?: string;
  limit?: string;
  olderThanDays?: string;
  json?: boolean;
}

const id = (value: string | undefined) => intOption('a task id', value, 1, Number.MAX_SAFE_INTEGER);

export async function tasksCommand(args: TasksArgs): Promise<number> {
  try {
    return await run(args);
  } catch (error) {
    // One line and the exit code every command gives the same error (README, "Exit codes").
    return reportFailure(error, false);
  }
}

async function run(args: TasksArgs): Promise<number> {
  const [action, arg] = args.positionals;
  const known = ['submit', 'list', 'show', 'cancel', 'delete', 'prune', 'resume', 'set-capacity', 'worker'];
  if (!action || !known.includes(action)) {
    console.error(TASKS_USAGE);
    return 2;
  }
  // The environment read once (A15): the task settings and the database from one table.
  const settings = readSettings(process.env);
  const config = parseTaskConfig(process.env, settings);
  const target = settings.DATABASE_URL;
  // Input is validated before the database is opened (nothing is written on a usage error).
  const input = validateInput(action, arg, args);
  // Reads only (list, show): never creates the database; an unmigrated one names the command to run.
  if (action === 'list' || action === 'show') await requireMigratedSchema(target, { command: `tasks ${action}`, allMigrations: false, drift: false });
  // The worker is a host: like `apsup run`, nothing starts on a schema the code was not written
  // for (its runner would call operations a pending migration installs).
  const schema = action === 'worker' ? await requireMigratedSchema(target, { command: 'tasks worker', allMigrations: true, drift: true }) : null;
  // The worker is a host like `apsup run`: its timeouts and IPC must not freeze while a task holds a transaction open.
  const store = (
    action === 'worker'
      ? openHostStore(target, { sqliteSynchronous: settings.SQLITE_SYNCHRONOUS, transactionBoundMs: settings.ARTIFACT_PROCESSING_LEASE_TTL_SECONDS * 1000 })
      : openStore(target)
  ) as BaseStore;
  const tasks = new TaskStore(store);
  const out = (value: unknown) => console.log(JSON.stringify(value, null, 2));
  try {
    switch (action) {
      case 'submit': {
        const registry = await loadHostTaskRegistry(config.tasksModule);
        const service = new TaskService(tasks, registry, config);
        const submitted = await service.submit({
          taskType: arg!,
          payload: input.payload,
          dedupeKey: args.dedupeKey,
          timeoutMs: input.timeoutMs,
          handlerVersion: input.handlerVersion,
        });
        out(submitted);
        // After the commit: other processes' runners probe at once when a wake-up channel is configured.
        await publishOnce(process.env, target, createLogger({ level: 'silent' }), 'task', String(submitted.taskId)).catch(() => undefined);
        return 0;
      }
      case 'list': {
        const page = await tasks.list({ beforeTaskId: input.before ?? null, limit: input.limit ?? 50, state: (args.state as TaskState) ?? null });
        if (args.json) out(page);
        else {
          for (const t of page.tasks) {
            const progress = t.progressCurrent !== null ? ` ${t.progressCurrent}/${t.progressTotal ?? '?'}` : '';
            console.log(
              `${String(t.taskId).padStart(6)}  ${t.state.padEnd(9)} ${t.taskType}@v${t.handlerVersion}  attempts=${t.attemptCount}${progress}${t.progressMessage ? `  "${t.progressMessage}"` : ''}`,
            );
          }
          if (page.nextBeforeTaskId) {
            const keep = `${args.state ? ` --state ${args.state}` : ''}${args.limit ? ` --limit ${args.limit}` : ''}`;
            console.log(`more: apsup tasks list --before ${page.nextBeforeTaskId}${keep}`);
          }
        }
        return 0;
      }
      case 'show': {
        const task = await tasks.read(input.taskId!);
        if (!task) {
          console.error(`apsup: task ${input.taskId} does not exist`);
          return 1;
        }
        out(task);
        return 0;
      }
      case 'cancel': {
        const service = new TaskService(tasks, await loadHostTaskRegistry(config.tasksModule), config);
        out(await service.cancel(input.taskId!));
        return 0;
      }
      case 'delete':
        await tasks.delete(input.taskId!);
        out({ taskId: input.taskId, deleted: true });
        return 0;
      case 'prune':
        out({ deleted: await tasks.pruneOlderThan(input.days! * 86_400_000, 10_000) });
        return 0;
      case 'resume': {
        const service = new TaskService(tasks, await loadHostTaskRegistry(config.tasksModule), config);
        out(await service.resume(input.taskId!));
        return 0;
      }
      case 'set-capacity':
        out(await tasks.setCapacity(input.capacity!));
        return 0;
      default: {
        const registry = await loadHostTaskRegistry(config.tasksModule);
        const logger = createLogger({ name: 'apsup-tasks' });
        const accounts = await resolveSessionAccounts(target);
        logFencing(logger, accounts);
        const runner = new TaskRunner(tasks, registry, config, childDatabase(accounts, transactionBoundFromEnv(), logger, { pool: 'tasks' }), logger);
        // Signals are handled from before the start-up sweep: a SIGTERM during it stops cleanly;
        // the same keypress relayed by npm is not a second signal, a later one forces (shutdown.ts).
        const signals = new ShutdownSignals(logger);
        signals.onForce(async () => {
          const killed = await killManagedChildren();
          logger.warn({ killed }, 'forced shutdown: task worker processes killed');
        });
        const keepAlive = setInterval(() => undefined, 1 << 30);
        try {
          await runner.start();
          if (schema && !schema.checked) logger.warn({ reason: schema.reason }, 'schema check incomplete');
          logger.info({ workerId: runner.workerId, capacity: config.capacity }, 'task worker running');
          await signals.requested;
          clearInterval(keepAlive);
          await runner.stop();
        } finally {
          clearInterval(keepAlive);
          signals.dispose();
        }
        return 0;
      }
    }
  } finally {
    await store.close();
  }
}

interface Input {
  payload?: unknown;
  timeoutMs?: number;
  handlerVersion?: number;
  taskId?: number;
  before?: number;
  limit?: number;
  days?: number;
  capacity?: number;
}

function validateInput(action: string, arg: string | undefined, args: TasksArgs): Input {
  switch (action) {
    case 'submit':
      if (!arg) throw new TasksUsageError('submit needs a task type');
      return {
        payload: readPayload(args.payload, args.payloadFile),
        timeoutMs: timeoutOption(args.timeoutSeconds),
        handlerVersion: args.handlerVersion === undefined ? undefined : intOption('--handler-version', args.handlerVersion, 0, 1_000_000),
      };
    case 'list':
      if (args.state !== undefined && !['pending', 'running', ...TERMINAL_STATES].includes(args.state)) {
        throw new TasksUsageError(`--state must be one of pending, running, ${TERMINAL_STATES.join(', ')}; got ${JSON.stringify(args.state)}`);
      }
      return {
        before: args.before === undefined ? undefined : intOption('--before', args.before, 1, Number.MAX_SAFE_INTEGER),
        limit: args.limit === undefined ? undefined : intOption('--limit', args.limit, 1, 1000),
      };
    case 'show':
    case 'cancel':
    case 'delete':
    case 'resume':
      return { taskId: id(arg) };
    case 'prune':
      return { days: daysOption(args.olderThanDays) };
    case 'set-capacity':
      return { capacity: intOption('set-capacity <n>', arg, 1, 10_000) };
    default:
      return {};
  }
}
