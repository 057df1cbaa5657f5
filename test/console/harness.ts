/**
 * The console tests' fixture: a seeded database (a family with a dirty and an owed scope, a held
 * term, a failed task with its error, a pending task) and a console started in-process on it.
 */
import path from 'node:path';
import { parseRuntimeConfig } from '../../src/config/runtime-config.ts';
import { ConsoleServer } from '../../src/console/server.ts';
import type { BaseStore } from '../../src/store/base-store.ts';
import { parseTaskConfig } from '../../src/tasks/config.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { acquireSqliteHostLock } from '../../src/runtime/sqlite-host-lock.ts';
import type { BackendFixture } from '../helpers/backends.ts';
import { ROOT } from '../cli/helpers.ts';
import { testFamily } from '../fixtures/runtime-harness.ts';

export const P = 'POWERCONTEXT_SERVER_RUNTIME_';
export const TOKEN = 'console-test-token-0123456789';
export const FAMILY = 'cx-alpha';
export const TASKS_MODULE = path.join(ROOT, 'test/fixtures/tasks/registry.ts');
export const registrations = [testFamily(FAMILY, { maxWorkers: 3, schedule: { kind: 'interval', seconds: 300 } }), testFamily('cx-beta', { maxWorkers: 1 })];

export interface Seeded {
  binding: string;
  holderId: string;
  generation: number;
  failedTaskId: number;
  pendingTaskId: number;
}

/** On SQLite a term is live while its host holds the host lock (`apsup status`): this process holds it; call the result to release. */
export function holdSqliteHost(fx: BackendFixture): () => void {
  return fx.target.backend === 'sqlite' ? acquireSqliteHostLock(fx.target.file) : () => undefined;
}

export async function seed(fx: BackendFixture, options: { payload?: unknown; errorMessage?: string; term?: boolean } = {}): Promise<Seeded> {
  const binding = registrations[0]!.bindingName;
  await fx.store.claimRuntimeMode('global');
  await fx.store.markDirty(binding, 'scope-dirty');
  await fx.store.acceptRequest(binding, 'scope-owed');
  await fx.store.acceptRequest(binding, 'scope-owed');
  // A running host takes the term itself (options.term false).
  const term = options.term === false ? { holderId: '', supervisorGeneration: 0 } : await fx.store.acquireTerm('global', 'host-console-a', 600_000);
  const tasks = new TaskStore(fx.store as BaseStore);
  const failed = await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: options.payload ?? { ms: 1 }, timeoutMs: 60_000 });
  const claimed = await tasks.claim('console-worker', 60_000, ['fx-sleep']);
  if (!claimed || claimed.taskId !== failed.taskId) throw new Error('seed: the failed task was not claimed');
  await tasks.transaction((tx) =>
    tasks.fail(failed.taskId, claimed.attemptToken, 'handler_error', options.errorMessage ?? 'index build failed: disk full', tx),
  );
  const pending = await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: { ms: 5 }, timeoutMs: 60_000 });
  return { binding, holderId: term.holderId!, generation: term.supervisorGeneration, failedTaskId: failed.taskId, pendingTaskId: pending.taskId };
}

export async function startConsole(fx: BackendFixture, options: { token?: string; host?: string; databaseUrl?: string } = {}): Promise<ConsoleServer> {
  const env = { [`${P}DATABASE_URL`]: options.databaseUrl ?? fx.url, [`${P}TASKS_MODULE`]: TASKS_MODULE };
  return ConsoleServer.start({
    address: { host: options.host ?? '127.0.0.1', port: 0 },
    store: fx.store,
    config: parseRuntimeConfig(env, registrations),
    taskConfig: parseTaskConfig(env),
    token: options.token,
    env,
  });
}

export async function api(server: ConsoleServer, route: string, init: RequestInit & { token?: string } = {}) {
  const headers = new Headers(init.headers);
  if (init.token) headers.set('authorization', `Bearer ${init.token}`);
  const res = await fetch(`${server.url}${route}`, { ...init, headers });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body: body as Record<string, any> };
}
