/**
 * Durable-task invariants of a drained trial (issue #10 (1) and (5)): every task terminal; no task
 * ends with two attempts' writes (its items all of one attempt; a succeeded task's items are 1..n
 * of the attempt that succeeded, its domain row 'done'); no late write: walking ch_task_log by id
 * (the task row's history from its triggers, and the handler's fenced writes: both taken under
 * the task row's lock, so their order is the lock's), every write comes from the attempt that
 * holds the row, while it runs, before its lease expired.
 */
import type { TrialDb } from './db.ts';
import type { Violation } from './checker.ts';
import type { Exec } from './schema.ts';

export interface TaskLogRow {
  id: number;
  task_id: number;
  kind: string;
  attempt_token: string | null;
  state: string | null;
  lease_expires_at: string | null;
  at: string;
}

export interface TaskStats {
  tasks: number;
  succeeded: number;
  failed: number;
  attempts: number;
  requeued: number;
  writes: number;
  historyRows: number;
}

const num = (v: unknown) => Number(v ?? 0);
/** Both backends' times as 'YYYY-MM-DD HH:MM:SS.mmm' (MySQL keeps 6 digits, the lease 3). */
const ms = (t: string) => t.slice(0, 23);

export async function unsettledTasks(db: TrialDb): Promise<number[]> {
  return (await db.exec("SELECT task_id FROM pc_durable_tasks WHERE state IN ('pending', 'running') ORDER BY task_id")).map((r) => num(r.task_id));
}

export async function readTaskLog(db: TrialDb | { exec: Exec }): Promise<TaskLogRow[]> {
  return (await db.exec(`SELECT id, task_id, kind, attempt_token, state, lease_expires_at, at FROM ch_task_log ORDER BY id`)).map((r) => ({
    ...r,
    id: num(r.id),
    task_id: num(r.task_id),
  })) as unknown as TaskLogRow[];
}

export async function checkTasks(db: TrialDb, drained: boolean, stats: TaskStats = emptyTaskStats()): Promise<Violation[]> {
  // One snapshot for every read (see checkInvariants): tasks may still run when a drain timed out.
  return db.snapshot((exec) => checkTaskRows(exec, drained, stats));
}

async function checkTaskRows(exec: Exec, drained: boolean, stats: TaskStats): Promise<Violation[]> {
  const v: Violation[] = [];
  const db = { exec };
  const tasks = await db.exec('SELECT task_id, state, payload, attempt_count, error_code FROM pc_durable_tasks ORDER BY task_id');
  const log = await readTaskLog(db);
  const items = await db.exec('SELECT id, task_id, item, attempt_token FROM ch_task_items ORDER BY id');
  const domain = new Map((await db.exec('SELECT task_id, attempt_token, state FROM ch_task_domain')).map((r) => [num(r.task_id), r]));
  stats.tasks = tasks.length;
  stats.historyRows = log.filter((r) => r.kind === 'row').length;
  stats.writes = log.length - stats.historyRows;
  const byTask = new Map<number, TaskLogRow[]>();
  for (const r of log) {
    if (!byTask.has(r.task_id)) byTask.set(r.task_id, []);
    byTask.get(r.task_id)!.push(r);
  }
  // Late writes, and the attempt that succeeded (the holder of the row when it turned succeeded).
  const winner = new Map<number, string | null>();
  for (const [taskId, rows] of byTask) {
    let cur: TaskLogRow | null = null;
    const tokens = new Set<string>();
    for (const r of rows) {
      if (r.kind === 'row') {
        if (r.state === 'running' && r.attempt_token) tokens.add(r.attempt_token);
        if (r.state === 'pending' && cur?.state === 'running') stats.requeued += 1;
        if (r.state === 'succeeded') winner.set(taskId, cur?.state === 'running' ? cur.attempt_token : null);
        cur = r;
        continue;
      }
      const key = `task ${taskId}`;
      if (!cur || cur.state !== 'running' || cur.attempt_token !== r.attempt_token) {
        v.push({
          invariant: 'late-write',
          key,
          detail: `a ${r.kind} write of attempt ${r.attempt_token} while the task row was ${cur?.state ?? 'absent'} under attempt ${cur?.attempt_token ?? 'none'}`,
          rows: [cur, r],
        });
      } else if (cur.lease_expires_at === null || ms(r.at) >= ms(cur.lease_expires_at)) {
        v.push({ invariant: 'late-write', key, detail: `a ${r.kind} write at ${r.at} after its lease expired at ${cur.lease_expires_at}`, rows: [cur, r] });
      }
    }
    stats.attempts += tokens.size;
  }
  for (const t of tasks) {
    const taskId = num(t.task_id);
    const state = String(t.state);
    const key = `task ${taskId}`;
    if (state === 'succeeded') stats.succeeded += 1;
    if (state === 'failed') stats.failed += 1;
    if (state === 'pending' || state === 'running') {
      // Not drained: a drain timeout (liveness), reported by the trial.
      if (drained) v.push({ invariant: 'lost', key, detail: `task not terminal after the drain (${state})`, rows: [t] });
      continue;
    }
    const mine = items.filter((i) => num(i.task_id) === taskId);
    const tokens = [...new Set(mine.map((i) => String(i.attempt_token)))];
    if (tokens.length > 1)
      v.push({ invariant: 'two-attempts', key, detail: `the ${state} task ends with the writes of ${tokens.length} attempts`, rows: mine });
    if (state !== 'succeeded') continue;
    const steps = num((typeof t.payload === 'string' ? JSON.parse(t.payload) : t.payload)?.steps);
    const seqs = mine.map((i) => num(i.item));
    if (seqs.length !== steps || seqs.some((s, i) => s !== i + 1))
      v.push({ invariant: 'two-attempts', key, detail: `succeeded with items [${seqs.join(',')}], not 1..${steps}`, rows: mine });
    const w = winner.get(taskId);
    if (tokens.length === 1 && w !== undefined && w !== tokens[0])
      v.push({ invariant: 'two-attempts', key, detail: `succeeded under attempt ${w} but its items are attempt ${tokens[0]}'s`, rows: mine });
    const d = domain.get(taskId);
    if (!d || d.state !== 'done' || (w && d.attempt_token !== w))
      v.push({ invariant: 'two-attempts', key, detail: 'succeeded but its domain row is not done by the attempt that succeeded', rows: [d ?? null, w] });
  }
  return v;
}

export function emptyTaskStats(): TaskStats {
  return { tasks: 0, succeeded: 0, failed: 0, attempts: 0, requeued: 0, writes: 0, historyRows: 0 };
}

/** Task faults: fault to the success of the first attempt claimed after it (the log's times). */
export function taskRecoveryMs(faultT: number, log: TaskLogRow[]): number | null {
  const epoch = (at: string) => Date.parse(`${at.slice(0, 23).replace(' ', 'T')}Z`);
  const claimedAfter = new Map<string, number>();
  let best: number | null = null;
  const last = new Map<number, TaskLogRow>();
  for (const r of log) {
    if (r.kind !== 'row') continue;
    const prev = last.get(r.task_id);
    if (r.state === 'running' && r.attempt_token && prev?.attempt_token !== r.attempt_token && epoch(r.at) > faultT)
      claimedAfter.set(r.attempt_token, epoch(r.at));
    if (r.state === 'succeeded' && prev?.attempt_token && claimedAfter.has(prev.attempt_token)) {
      const d = epoch(r.at) - faultT;
      if (best === null || d < best) best = d;
    }
    last.set(r.task_id, r);
  }
  return best;
}
