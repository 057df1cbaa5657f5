/**
 * Durable-task submissions of a trial: the driver submits "ch-task" tasks (2-5 items, 30-250 ms
 * apart) through the TaskService of the chaos tasks module, on its own store, while the faults
 * land. A failed submission (a busy database) is retried; a submission never half-lands.
 */
import path from 'node:path';
import type { BaseStore } from '../src/store/base-store.ts';
import { loadTaskRegistry } from '../src/tasks/load.ts';
import { TaskService } from '../src/tasks/service.ts';
import { TaskStore } from '../src/tasks/task-store.ts';
import type { TrialDb } from './db.ts';
import type { Prng } from './prng.ts';
import { CHAOS_TASK_TYPE, TASKS_MODULE_PATH } from './tasks.ts';

export const TASK_TIMEOUT_MS = 60_000;

export async function taskService(db: TrialDb): Promise<TaskService> {
  const registry = await loadTaskRegistry(path.resolve(TASKS_MODULE_PATH));
  return new TaskService(new TaskStore(db.store as unknown as BaseStore), registry, { maxTimeoutMs: TASK_TIMEOUT_MS, defaultTimeoutMs: TASK_TIMEOUT_MS });
}

export async function submitTask(service: TaskService, rng: Prng, stats: { tasks: number; errors: number }): Promise<void> {
  const payload = { steps: rng.int(2, 5), delayMs: rng.int(30, 250) };
  for (let attempt = 0; attempt < 20; attempt += 1) {
    try {
      await service.submit({ taskType: CHAOS_TASK_TYPE, payload, timeoutMs: TASK_TIMEOUT_MS });
      stats.tasks += 1;
      return;
    } catch {
      stats.errors += 1;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error('driver: could not submit a task in 20 attempts');
}
