/**
 * Process-level faults of a trial, chosen by the trial's PRNG (issue #10): SIGKILL of the leader
 * (the SQLite host) and its restart, SIGSTOP of the leader (past the lease TTL on MySQL) then
 * SIGCONT, SIGKILL and SIGSTOP of workers, KILL of the leader's MySQL connections, and a restart
 * of a candidate with a named crash point armed (APSUP_FAULT_*, src/devtools/fault.ts).
 */
import type { Cluster } from './cluster.ts';
import { killConnectionsOf } from './netconn.ts';
import { TASK_LEASE_MS, TTL_MS, type Candidate } from './procs.ts';
import type { Prng } from './prng.ts';

export const CRASH_POINTS = ['after_admission', 'mid_scan', 'after_business_commit', 'term_change', 'task_claimed'] as const;
export type FaultKind =
  | 'leader-kill'
  | 'leader-stop'
  | 'worker-kill'
  | 'worker-stop'
  | 'db-conn-kill'
  | `crash:${(typeof CRASH_POINTS)[number]}`
  | 'task-worker-kill'
  | 'task-worker-stop'
  | 'runner-kill'
  | 'runner-stop';
/** Faults whose recovery is a task's (the first attempt claimed after it that succeeded). */
export const TASK_FAULTS: readonly string[] = ['task-worker-kill', 'task-worker-stop', 'runner-kill', 'runner-stop', 'crash:task_claimed'];

export interface FaultRecord {
  at: number;
  t: number;
  kind: FaultKind;
  pid?: number;
  detail?: string;
}

export function kindsFor(backend: 'sqlite' | 'mysql', crashPoints: boolean, only?: string[]): Record<string, number> {
  const w: Record<string, number> = {
    'leader-kill': 3,
    'leader-stop': 2,
    'worker-kill': 3,
    'worker-stop': 2,
    'task-worker-kill': 2,
    'task-worker-stop': 2,
    'runner-kill': 1,
    'runner-stop': 1,
  };
  if (backend === 'mysql') w['db-conn-kill'] = 2;
  if (crashPoints) for (const p of CRASH_POINTS) w[`crash:${p}`] = 1;
  if (!only) return w;
  const unknown = only.filter((k) => !(k in w));
  if (unknown.length > 0) throw new Error(`--kinds: ${unknown.join(', ')} not a fault of ${backend}; allowed: ${Object.keys(w).join(', ')}`);
  return Object.fromEntries(only.map((k) => [k, w[k]]));
}

export class FaultInjector {
  readonly schedule: FaultRecord[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Hand-overs in progress (a crash point armed in a MySQL standby that must take the term). */
  private handovers = 0;
  private readonly stopped = new Set<number>();

  constructor(
    private readonly cluster: Cluster,
    private readonly rng: Prng,
    private readonly t0: number,
    private readonly weights: Record<string, number>,
  ) {}

  /** True while a restart or a SIGCONT is scheduled. */
  get pending(): boolean {
    return this.timers.size > 0 || this.handovers > 0;
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  private record(kind: FaultKind, pid?: number, detail?: string): void {
    const t = Date.now();
    this.schedule.push({ at: t - this.t0, t, kind, pid, detail });
  }

  /** Injects one fault; a kind whose target does not exist now is drawn again (3 draws at most). */
  async inject(): Promise<boolean> {
    for (let draw = 0; draw < 3; draw += 1) if (await this.injectOne(this.rng.weighted(this.weights) as FaultKind)) return true;
    return false;
  }

  /**
   * MySQL: the armed replacement starts as the standby (the other candidate took the term while
   * it started), where a leader's crash point is never reached (run 1: mid_scan 0 passes). Once
   * it is up, the leader is killed too (restarted 1 s later), so the armed one takes the term.
   */
  private async handOver(armed: Candidate, rec: FaultRecord): Promise<void> {
    this.handovers += 1;
    try {
      const deadline = Date.now() + 30_000;
      while (!armed.holderId && !armed.exited && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const leader = await this.cluster.leader();
      const last = rec;
      if (armed.exited || !armed.holderId || !leader || leader === armed) {
        if (last)
          last.detail = `${last.detail}; no hand-over (${armed.exited ? 'armed one exited' : !armed.holderId ? 'armed one not up' : !leader ? 'no leader' : 'armed one leads'})`;
        return;
      }
      leader.signal('SIGKILL');
      if (last) last.detail = `${last.detail}; leader ${leader.pid} killed to hand it the term`;
      await leader.exit;
      this.later(1000, () => {
        this.cluster.fill();
      });
    } finally {
      this.handovers -= 1;
    }
  }

  private async injectOne(kind: FaultKind): Promise<boolean> {
    const leader = await this.cluster.leader();
    const mysql = this.cluster.db.backend === 'mysql';
    if (kind === 'leader-kill' || kind.startsWith('crash:')) {
      if (!leader) return false;
      leader.signal('SIGKILL');
      const point = kind.startsWith('crash:') ? kind.slice(6) : null;
      this.record(kind, leader.pid, point ? `restart with APSUP_FAULT_${point.toUpperCase()}` : undefined);
      if (point) {
        // The replacement starts at once with the crash point armed: it exits there (RFC 12 item 6, 9, 10).
        await leader.exit;
        const [armed] = this.cluster.fill({ [`APSUP_FAULT_${point.toUpperCase()}`]: `exit@1` });
        if (mysql && armed && point !== 'task_claimed') void this.handOver(armed, this.schedule[this.schedule.length - 1]);
      } else {
        this.later(this.rng.int(200, 1200), () => {
          this.cluster.fill();
        });
      }
      return true;
    }
    if (kind === 'leader-stop') {
      if (!leader) return false;
      const ms = mysql ? TTL_MS + this.rng.int(500, 2500) : this.rng.int(500, 2500);
      leader.signal('SIGSTOP');
      this.record(kind, leader.pid, `${ms} ms`);
      this.later(ms, () => leader.signal('SIGCONT'));
      return true;
    }
    if (kind === 'db-conn-kill') {
      if (!leader) return false;
      const n = await killConnectionsOf(this.cluster.db, leader.pid).catch(() => 0);
      this.record(kind, leader.pid, `${n} connections`);
      return n > 0;
    }
    if (kind === 'runner-kill' || kind === 'runner-stop') {
      // The task runner lives in a candidate (every one on MySQL runs one): the one with the most attempts.
      const target = this.cluster
        .live()
        .map((c) => ({ c, n: c.taskWorkers().length }))
        .sort((a, b) => b.n - a.n)[0];
      if (!target || target.n === 0) return false;
      const c = target.c;
      if (kind === 'runner-kill') {
        c.signal('SIGKILL');
        this.record(kind, c.pid, `${target.n} task workers`);
        this.later(this.rng.int(200, 1200), () => {
          this.cluster.fill();
        });
        return true;
      }
      // The whole group (runner, its task workers, its family workers) past the task lease.
      const ms = TASK_LEASE_MS + this.rng.int(500, 2000);
      try {
        process.kill(-c.pid, 'SIGSTOP');
      } catch {
        return false;
      }
      c.stopped = true;
      this.record(kind, c.pid, `${ms} ms, ${target.n} task workers`);
      this.later(ms, () => {
        try {
          process.kill(-c.pid, 'SIGCONT');
        } catch {
          /* gone */
        }
        c.stopped = false;
      });
      return true;
    }
    if (kind === 'task-worker-kill' || kind === 'task-worker-stop') {
      const tasks = this.cluster.live().flatMap((c) => c.taskWorkers());
      if (tasks.length === 0) return false;
      const pid = this.rng.pick(tasks);
      if (kind === 'task-worker-kill') {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          return false;
        }
        this.record(kind, pid);
        return true;
      }
      // Sometimes past the lease: the attempt is lost while stopped and must not write when resumed.
      return this.pause(kind, pid, this.rng.int(500, TASK_LEASE_MS + 2000));
    }
    const workers = (leader ? [leader] : this.cluster.live()).flatMap((c) => c.familyWorkers());
    if (workers.length === 0) return false;
    const pid = this.rng.pick(workers);
    if (kind === 'worker-kill') {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        return false;
      }
      this.record(kind, pid);
      return true;
    }
    return this.pause(kind, pid, this.rng.int(500, 3000));
  }

  /** SIGSTOP for `ms`, then SIGCONT (or at once when the fault window ends). */
  private pause(kind: FaultKind, pid: number, ms: number): boolean {
    try {
      process.kill(pid, 'SIGSTOP');
    } catch {
      return false;
    }
    this.stopped.add(pid);
    this.record(kind, pid, `${ms} ms`);
    this.later(ms, () => {
      this.stopped.delete(pid);
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        /* gone */
      }
    });
    return true;
  }

  /** Ends the fault window: every pending restart and SIGCONT happens now. */
  settle(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const pid of this.stopped) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        /* gone */
      }
    }
    this.stopped.clear();
    this.cluster.resumeAll();
    this.cluster.fill();
  }
}
