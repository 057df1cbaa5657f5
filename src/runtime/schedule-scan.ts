/**
 * The schedule and the automatic scan of one family (RFC 4): whether a check is due, the check
 * itself (pc_aps_begin_scan decides on the database clock; this only keeps a local estimate of
 * the next due time so a timer can wake the loop), and the scan's paged admission, bounded per
 * examination and batched by the ready queue's share (RFC 2).
 */
import { cronFireAfter, cronFireAtOrBefore } from '../schedule/cron.ts';
import type { SchedulePolicyDecl } from '../registry/registration.ts';
import type { Logger } from '../logging.ts';
import { ScanStaleError } from '../store/errors.ts';
import type { SchedulePolicy, Store, Term } from '../store/types.ts';
import { faultPoint } from '../devtools/fault.ts';
import { SPANS, familyAttributes, traced } from '../observability/tracing.ts';
import { SCAN_PAGES_PER_EXAMINATION, admissionExclusions } from './admission-page.ts';
import type { Clock } from './clock.ts';
import type { KeyStateTable } from './key-states.ts';

/** What the scan reads from and writes into. */
export interface ScanTarget {
  store: Store;
  table: KeyStateTable;
  /** Puts an admitted key into the ready queue; false when it finds no place. */
  enqueue(scopeId: string): boolean;
  /** An admitted key found no place: owed-request discovery picks it up. */
  notifyRequest(pendingSequence: number): void;
  /** Whether the pending-work calibration for this check is done (calibration.ts). */
  calibrated(): boolean;
  hasBudget(): boolean;
  wake(): void;
}

export class ScheduleScan {
  private scan: { generation: number; cursor: number } | null = null;
  /** Local wall time (ms) when the schedule is next due; null: unknown, ask the database. */
  private nextDueAt: number | null = null;
  /** True when the schedule should be asked (start, due timer fired, dirty notification). */
  private checkSchedule = true;

  constructor(
    private readonly bindingName: string,
    private readonly family: string,
    private readonly schedule: SchedulePolicyDecl,
    private readonly settings: { scanPageSize: number; readyQueueSize: number },
    private readonly target: ScanTarget,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  get enabled(): boolean {
    return this.schedule.kind !== 'off';
  }

  get inProgress(): boolean {
    return this.scan !== null;
  }

  get nextDue(): number | null {
    return this.nextDueAt;
  }

  /** Ordinary work was marked dirty (or a poll): a never-checked family may now be due. */
  notifyDirty(): void {
    if (this.nextDueAt === null) this.checkSchedule = true;
  }

  /** A new term: ask the database again. */
  reset(): void {
    this.scan = null;
    this.nextDueAt = null;
    this.checkSchedule = true;
  }

  due(now: number): boolean {
    if (this.scan) return true;
    if (this.checkSchedule) return true;
    return this.enabled && this.nextDueAt !== null && now >= this.nextDueAt;
  }

  /** The local time a timer should wake the loop for the next check (none while a scan or a calibration runs). */
  wakeAt(calibrating: boolean): number | null {
    return this.enabled && !this.scan && !calibrating && this.nextDueAt !== null ? this.nextDueAt : null;
  }

  /**
   * Admission is batched: while the ready queue already holds at least `threshold` (half the
   * queue) keys the scan admitted, the next page waits until the queue has room for at least
   * half a queue, so a busy family admits pages of many keys in one transaction instead of one
   * per freed worker slot. Below that share the scan admits into any free room on its turn:
   * requests and due retries filling the queue never keep the scan out (RFC 2).
   */
  admissionRoom(): boolean {
    const table = this.target.table;
    const room = table.room();
    if (room <= 0) return false;
    const threshold = Math.max(1, Math.min(this.settings.scanPageSize, Math.ceil(this.settings.readyQueueSize / 2)));
    if (room >= threshold || table.count('ready') === 0) return true;
    return table.readyFromScan() < threshold;
  }

  /** One turn of the schedule: check when due, then admit pages while there is room. */
  async maybeAdvance(term: Term, now: number): Promise<void> {
    if (this.due(now) && this.admissionRoom() && this.target.hasBudget())
      await traced(SPANS.scan, familyAttributes(this.family, this.bindingName), () => this.advance(term));
  }

  private async policyNow(): Promise<SchedulePolicy> {
    const s = this.schedule;
    if (s.kind === 'interval') return { kind: 'interval', intervalSeconds: s.seconds };
    if (s.kind === 'off') return { kind: 'off' };
    const { dbNow } = await this.target.store.readBindingState(this.bindingName);
    return { kind: 'cron', fireAt: cronFireAtOrBefore(s.expression, s.timezone, dbNow) };
  }

  private setNextDue(nextDue: Date | null, dbNow: Date, offset: number): void {
    const s = this.schedule;
    if (s.kind === 'cron') this.nextDueAt = cronFireAfter(s.expression, s.timezone, dbNow).getTime() + offset;
    else if (s.kind === 'interval') this.nextDueAt = nextDue ? nextDue.getTime() + offset : null;
    else this.nextDueAt = null;
  }

  private async begin(term: Term): Promise<boolean> {
    const { store } = this.target;
    if (!this.enabled && !this.checkSchedule) return false;
    // Calibrate first; until the calibration has ended (well or not) the check stays pending.
    if (this.enabled && !this.target.calibrated()) return false;
    this.checkSchedule = false;
    const policy = await this.policyNow();
    const start = await store.beginScan(term, this.bindingName, policy);
    const offset = this.clock.now() - start.dbNow.getTime();
    if (start.outcome === 'not_due') {
      this.setNextDue(start.nextDueAt, start.dbNow, offset);
      return false;
    }
    if (!this.enabled) {
      // RFC 4: with automatic processing off no further ordinary dirty scope is admitted; a scan
      // left unfinished under the earlier configuration is ended now, and the requests it
      // already admitted stay owed (they are recovered as owed requests).
      const finish = await store.finishScan(term, this.bindingName, start.scanGeneration);
      this.logger.info(
        { binding: this.bindingName, family: this.family, scanGeneration: finish.scanGeneration },
        'unfinished automatic scan ended: the schedule is off',
      );
      this.setNextDue(null, start.dbNow, offset);
      return false;
    }
    this.scan = { generation: start.scanGeneration, cursor: 0 };
    this.setNextDue(start.nextDueAt, start.dbNow, offset);
    this.logger.info(
      {
        binding: this.bindingName,
        family: this.family,
        scanGeneration: start.scanGeneration,
        outcome: start.outcome,
        upperPendingSequence: start.scanUpperPendingSequence,
      },
      'automatic scan begun',
    );
    return true;
  }

  private async advance(term: Term): Promise<void> {
    if (!this.scan && !(await this.begin(term))) return;
    const { store, table } = this.target;
    for (let pages = 0; this.scan && this.admissionRoom(); pages += 1) {
      if (pages === SCAN_PAGES_PER_EXAMINATION) {
        this.target.wake();
        return;
      } // the rest after the other families
      const limit = Math.min(this.settings.scanPageSize, table.room());
      const exclude = admissionExclusions(table.keys('ready'), table.keys('running'));
      let page;
      try {
        const scan = this.scan;
        page = await traced(SPANS.admissionPage, familyAttributes(this.family, this.bindingName), () =>
          store.admitScanPage(term, this.bindingName, scan.generation, scan.cursor, limit, exclude),
        );
      } catch (error) {
        if (!(error instanceof ScanStaleError)) throw error;
        // The binding's scan is not ours any more: forget it and check again from the database.
        this.logger.warn({ binding: this.bindingName, family: this.family, scanGeneration: this.scan.generation }, 'automatic scan went stale; checking again');
        this.scan = null;
        this.checkSchedule = true;
        return;
      }
      if (page.keys.length > 0) faultPoint('after_admission');
      for (const key of page.keys) {
        // Admitted keys are owed in the database; one that finds no room (a successor took it
        // meanwhile) is picked up by owed-request discovery.
        if (!this.target.enqueue(key.scopeId)) this.target.notifyRequest(key.pendingSequence);
      }
      if (page.keys.length > 0) this.logger.debug({ binding: this.bindingName, family: this.family, admitted: page.keys.length }, 'scan page admitted');
      this.scan.cursor = page.nextAfterSequence;
      if (!page.exhausted) faultPoint('mid_scan');
      if (page.exhausted) {
        const finish = await store.finishScan(term, this.bindingName, this.scan.generation);
        this.logger.info({ binding: this.bindingName, family: this.family, scanGeneration: finish.scanGeneration }, 'automatic scan finished');
        this.scan = null;
        // A scan that ends late makes the family due again at once (the database decides).
        if (this.schedule.kind === 'interval' && this.nextDueAt !== null && this.clock.now() >= this.nextDueAt) this.checkSchedule = true;
      }
    }
  }
}
