/**
 * The candidates of a trial: one `all` host on SQLite (its only role, RFC 8), two `background`
 * candidates of the one global lease on MySQL. Knows which one leads (the lease row's holder
 * against each candidate's logged holder id) and restarts the dead ones.
 */
import type { TrialDb } from './db.ts';
import { Candidate } from './procs.ts';

export class Cluster {
  readonly candidates: Candidate[] = [];
  private started = 0;
  readonly size: number;

  constructor(
    readonly db: TrialDb,
    readonly env: Record<string, string>,
  ) {
    this.size = db.backend === 'sqlite' ? 1 : 2;
  }

  /** Starts candidates until `size` are alive; extra env only for this start (fault hooks). */
  fill(extraEnv: Record<string, string> = {}): Candidate[] {
    const out: Candidate[] = [];
    while (this.live().length < this.size) {
      this.started += 1;
      const c = new Candidate(`c${this.started}`, this.db.url, this.db.backend === 'sqlite' ? 'all' : 'background', { ...this.env, ...extraEnv });
      this.candidates.push(c);
      out.push(c);
    }
    return out;
  }

  live(): Candidate[] {
    return this.candidates.filter((c) => !c.exited);
  }

  async leader(): Promise<Candidate | null> {
    try {
      const lease = await this.db.store.readLease('global');
      if (!lease.holderId) return null;
      return this.live().find((c) => c.holderId === lease.holderId) ?? null;
    } catch {
      return null;
    }
  }

  /** The lease row and each candidate (alive, logged holder id, last warnings): for a failed wait. */
  async describe(): Promise<string> {
    let lease: string;
    try {
      const l = await this.db.store.readLease('global');
      lease = `lease holder ${l.holderId ?? 'none'} generation ${l.supervisorGeneration} live ${l.live}`;
    } catch (error) {
      lease = `lease unreadable: ${(error as Error).message}`;
    }
    const each = this.candidates.map(
      (c) => `${c.name} pid ${c.pid} ${c.exited ? 'exited' : 'alive'} holder ${c.holderId ?? '?'}: ${c.tail.slice(-3).join(' | ')}`,
    );
    return [lease, ...each].join(' || ');
  }

  resumeAll(): void {
    for (const c of this.live()) {
      if (c.stopped) {
        try {
          process.kill(-c.pid, 'SIGCONT');
        } catch {
          /* gone */
        }
        c.signal('SIGCONT');
      }
      for (const w of c.workers()) {
        try {
          process.kill(w, 'SIGCONT');
        } catch {
          /* gone */
        }
      }
    }
  }

  async stopAll(): Promise<void> {
    this.resumeAll();
    await Promise.all(this.live().map((c) => c.stop()));
  }
}
