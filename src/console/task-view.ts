/**
 * The tasks pages' data, on `apsup tasks list` / `show` (pc_task_list, pc_task_read). The state
 * filter is the operation's; the type and time filters (`type`, `since`) narrow its pages: up to
 * SCAN_ROWS rows are read per request, newest first, and the keyset cursor `before` continues
 * where the reading stopped, so a sparse filter pages on instead of scanning the table.
 */
import { TERMINAL_STATES, type TaskState, type TaskSummary } from '../tasks/task-types.ts';
import type { ConsoleSource } from './source.ts';

export const SCAN_ROWS = 2000;
const STATES = ['pending', 'running', ...TERMINAL_STATES] as string[];
const TYPE = /^[a-z][a-z0-9_.:-]{0,127}$/;

export class BadRequest extends Error {}

export interface TaskQuery {
  state: TaskState | null;
  type: string | null;
  since: Date | null;
  before: number | null;
  limit: number;
}

function int(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new BadRequest(`${name} must be an integer in ${min}..${max}`);
  return Number(raw);
}

export function parseTaskQuery(q: Record<string, string | undefined>): TaskQuery {
  const state = q.state || null;
  if (state !== null && !STATES.includes(state)) throw new BadRequest(`state must be one of ${STATES.join(', ')}`);
  const type = q.type || null;
  if (type !== null && !TYPE.test(type)) throw new BadRequest(`type must match ${TYPE}`);
  let since: Date | null = null;
  if (q.since) {
    since = new Date(q.since);
    if (Number.isNaN(since.getTime())) throw new BadRequest('since must be an ISO 8601 time');
  }
  return {
    state: state as TaskState | null,
    type,
    since,
    before: int('before', q.before, 1, Number.MAX_SAFE_INTEGER) ?? null,
    limit: int('limit', q.limit, 1, 1000) ?? 50,
  };
}

export async function listTasks(source: ConsoleSource, query: TaskQuery): Promise<{ tasks: TaskSummary[]; nextBeforeTaskId: number | null; scanned: number }> {
  const plain = query.type === null && query.since === null;
  if (plain) {
    const page = await source.tasks.list({ beforeTaskId: query.before, limit: query.limit, state: query.state });
    return { ...page, scanned: page.tasks.length };
  }
  const out: TaskSummary[] = [];
  let before = query.before;
  let scanned = 0;
  while (scanned < SCAN_ROWS) {
    const page = await source.tasks.list({ beforeTaskId: before, limit: Math.min(1000, SCAN_ROWS - scanned), state: query.state });
    for (const [i, t] of page.tasks.entries()) {
      scanned += 1;
      before = t.taskId;
      // Newest first: past `since`, nothing older can match.
      if (query.since && t.createdAt < query.since) return { tasks: out, nextBeforeTaskId: null, scanned };
      if (query.type === null || t.taskType === query.type) out.push(t);
      const rest = page.nextBeforeTaskId !== null || i < page.tasks.length - 1;
      if (out.length === query.limit) return { tasks: out, nextBeforeTaskId: rest ? before : null, scanned };
    }
    if (page.nextBeforeTaskId === null) return { tasks: out, nextBeforeTaskId: null, scanned };
  }
  return { tasks: out, nextBeforeTaskId: before, scanned };
}

export async function taskDetail(source: ConsoleSource, taskId: number) {
  return source.tasks.read(taskId);
}
