/**
 * Process-level faults of a trial, chosen by the trial's PRNG (issue #10): SIGKILL of the leader
 * (the SQLite host) and its restart, SIGSTOP of the leader (past the lease TTL on MySQL) then
 * SIGCONT, SIGKILL and SIGSTOP of workers, KILL of the leader's MySQL connections, and a restart
 * of a candidate with a named crash point armed (APSUP_FAULT_*, src/devtools/fault.ts).
 */
import type { Cluster } from './cluster.ts';
import { killConnectionsOf } from './netconn.ts';
import { TTL_MS } from './procs.ts';
import type { Prng } from './prng.ts';

export const CRASH_POINTS = ['after_admission', 'mid_scan', 'after_business_commit', 'term_change'] as const;
export type FaultKind = 'leader-kill' | 'leader-stop' | 'worker-kill' | 'worker-stop' | 'db-conn-kill' | `crash:${(typeof CRASH_POINTS)[number]}`;

export interface FaultRecord { at: number; t: number; kind: FaultKind; pid?: number; detail?: string }

export function kindsFor(backend: 'sqlite' | 'mysql', crashPoints: boolean): Record<string, number> {
  const w: Record<string, number> = { 'leader-kill': 3, 'leader-stop': 2, 'worker-kill': 3, 'worker-stop': 2 };
  if (backend === 'mysql') w['db-conn-kill'] = 2;
  if (crashPoints) for (const p of CRASH_POINTS) w[`crash:${p}`] = 1;
  return w;
}

export class FaultInjector {
  readonly schedule: FaultRecord[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stopped = new Set<number>();

  constructor(private readonly cluster: Cluster, private readonly rng: Prng, private readonly t0: number, private readonly weights: Record<string, number>) {}

  /** True while a restart or a SIGCONT is scheduled. */
  get pending(): boolean {
    return this.timers.size > 0;
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => { this.timers.delete(timer); fn(); }, ms);
    this.timers.add(timer);
  }

  private record(kind: FaultKind, pid?: number, detail?: string): void {
    const t = Date.now();
    this.schedule.push({ at: t - this.t0, t, kind, pid, detail });
  }

  /** Injects one fault; returns false when its target does not exist now (nothing done). */
  async inject(): Promise<boolean> {
    const kind = this.rng.weighted(this.weights) as FaultKind;
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
        this.cluster.fill({ [`APSUP_FAULT_${point.toUpperCase()}`]: `exit@1` });
      } else {
        this.later(this.rng.int(200, 1200), () => { this.cluster.fill(); });
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
    const workers = (leader ? [leader] : this.cluster.live()).flatMap((c) => c.workers());
    if (workers.length === 0) return false;
    const pid = this.rng.pick(workers);
    if (kind === 'worker-kill') {
      try { process.kill(pid, 'SIGKILL'); } catch { return false; }
      this.record(kind, pid);
      return true;
    }
    const ms = this.rng.int(500, 3000);
    try { process.kill(pid, 'SIGSTOP'); } catch { return false; }
    this.stopped.add(pid);
    this.record(kind, pid, `${ms} ms`);
    this.later(ms, () => { this.stopped.delete(pid); try { process.kill(pid, 'SIGCONT'); } catch { /* gone */ } });
    return true;
  }

  /** Ends the fault window: every pending restart and SIGCONT happens now. */
  settle(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const pid of this.stopped) { try { process.kill(pid, 'SIGCONT'); } catch { /* gone */ } }
    this.stopped.clear();
    this.cluster.resumeAll();
    this.cluster.fill();
  }
}
