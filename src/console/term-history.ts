/**
 * Term changes the console has seen (RFC 8: a takeover advances the generation, a renewal does
 * not). The database keeps only the current term of each key, so this history is what this
 * console observed between its reads: the first sighting of each key, then every change of
 * holder or generation, newest first, bounded.
 */
export interface LeaseSighting {
  supervisorKey: string;
  holderId: string | null;
  supervisorGeneration: number;
  live: boolean;
}

export type TermChangeKind = 'first_seen' | 'takeover' | 'reelected' | 'invalidated' | 'acquired';

export interface TermChange {
  supervisorKey: string;
  kind: TermChangeKind;
  fromHolderId: string | null;
  toHolderId: string | null;
  fromGeneration: number | null;
  toGeneration: number;
  /** Database time of the read that saw it. */
  observedAt: string;
}

export function classify(before: LeaseSighting, after: LeaseSighting): TermChangeKind | null {
  if (before.supervisorGeneration === after.supervisorGeneration && before.holderId === after.holderId) return null;
  if (after.holderId === null) return 'invalidated';
  if (before.holderId === null) return 'acquired';
  return before.holderId === after.holderId ? 'reelected' : 'takeover';
}

export class TermHistory {
  private readonly last = new Map<string, LeaseSighting>();
  private readonly changes: TermChange[] = [];

  constructor(private readonly limit = 100) {}

  observe(leases: readonly LeaseSighting[], dbNow: string): void {
    for (const lease of leases) {
      const before = this.last.get(lease.supervisorKey);
      this.last.set(lease.supervisorKey, { ...lease });
      if (!before) {
        if (lease.holderId !== null || lease.supervisorGeneration > 0) this.push(lease, 'first_seen', null, dbNow);
        continue;
      }
      const kind = classify(before, lease);
      if (kind) this.push(lease, kind, before, dbNow);
    }
  }

  private push(lease: LeaseSighting, kind: TermChangeKind, before: LeaseSighting | null, observedAt: string): void {
    this.changes.unshift({
      supervisorKey: lease.supervisorKey,
      kind,
      fromHolderId: before?.holderId ?? null,
      toHolderId: lease.holderId,
      fromGeneration: before?.supervisorGeneration ?? null,
      toGeneration: lease.supervisorGeneration,
      observedAt,
    });
    if (this.changes.length > this.limit) this.changes.length = this.limit;
  }

  list(): TermChange[] {
    return this.changes.map((c) => ({ ...c }));
  }
}
