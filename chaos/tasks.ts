/**
 * Tasks module of the chaos suite (POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE of the candidates and
 * the driver's TaskService): one type, "ch-task", whose side effects are fenced and idempotent
 * (a lost attempt is requeued and starts over), so every task ends succeeded unless its attempts
 * run out.
 */
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { TaskTypeDefinition } from '../src/tasks/registry.ts';

export const TASKS_MODULE_PATH = fileURLToPath(import.meta.url);
export const CHAOS_TASK_TYPE = 'ch-task';

export default [
  {
    taskType: CHAOS_TASK_TYPE,
    currentVersion: 1,
    versions: { 1: './task-handler.ts' },
    payload: z.object({ steps: z.number().int().positive().max(100), delayMs: z.number().int().nonnegative().max(10_000) }).strict(),
    idempotentSideEffects: true,
  },
] satisfies TaskTypeDefinition[];
