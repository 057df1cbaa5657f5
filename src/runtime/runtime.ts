/**
 * The host process: builds the supervisors the mode asks for (global: one supervisor and lease
 * 'global' with a partition per family; dedicated: one supervisor and lease 'artifact:<family>'
 * per family, in this same process), or none for the api role, which only accepts intents.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { describeConfig, type RuntimeConfig } from '../config/runtime-config.ts';
import { redactDatabaseUrl } from '../config/database-url.ts';
import { backgroundPrincipal } from '../config/trusted-principal.ts';
import { hostAccounts, type SessionAccounts } from '../store/session-accounts.ts';
import { childDatabase } from './child-database.ts';
import { attachFenceBreaker } from './takeover-bound.ts';
import { secretCandidate } from '../store/invocation-token.ts';
import type { Logger } from '../logging.ts';
import { hostStoreEnv, openHostStore } from '../store/open.ts';
import { lazyReadHandle, openReadHandle, type ReadHandle } from '../store/read-handle.ts';
import type { IntentSnapshot, LeaseRead, Store, TxHandle } from '../store/types.ts';
import { FamilyPartition } from './family-partition.ts';
import { runtimeStatus, type RuntimeStatus } from './runtime-status.ts';
import { Supervisor } from './supervisor.ts';
import { WorkerPool } from './worker-pool.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { watchSqliteCommits } from './sqlite-wakeup.ts';
import { systemClock, type Clock, type ClockTimer } from './clock.ts';
import type { NotifyChannel } from '../notify/channel.ts';
import { subscribeRuntime } from '../notify/hooks.ts';

/** How long shutdown waits for the store's connections to close. */
const CLOSE_BOUND_MS = 5000;

export function newHolderId(): string {
  const host =
    os
      .hostname()
      .replace(/[^A-Za-z0-9_.-]/g, '-')
      .slice(0, 60) || 'host';
  return `${host}:${process.pid}:${crypto.randomBytes(6).toString('hex')}`;
}

export class Runtime {
  readonly store: Store;
  private readonly providerRead: ReadHandle;
  private readonly pools: WorkerPool[] = [];
  readonly holderId: string;
  readonly supervisors: Supervisor[] = [];
  private readonly byFamily = new Map<string, { partition?: FamilyPartition; supervisor?: Supervisor; bindingName: string }>();
  private stopping: Promise<void> | null = null;
  private unwatch: (() => void) | null = null;
  /** The optional cross-process wake-up channel (attachNotify). */
  notify: NotifyChannel | null = null;
  /** Called when the process must not go on (SQLite: another host took the permanent term). */
  onFatal: ((reason: string) => void) | null = null;
  /** Local time and timers of every supervisor, term keeper, partition and worker pool of this host. */
  readonly clock: Clock;
  /** Which accounts the processors' sessions run on, and what that guarantees (status, /readyz). */
  readonly accounts: SessionAccounts;
  private closeBreaker: (() => Promise<void>) | null = null;

  constructor(
    readonly config: RuntimeConfig,
    private readonly logger: Logger,
    options: {
      holderId?: string;
      store?: Store;
      workerEnv?: NodeJS.ProcessEnv;
      clock?: Clock;
      /** The worker pools' clock (invocation timeouts, grace periods); default: clock. Tests drive it while terms renew in real time. */
      workerClock?: Clock;
      /** The processors' accounts (resolveSessionAccounts); default: the host's own. */
      accounts?: SessionAccounts;
    } = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.accounts = options.accounts ?? hostAccounts(config.database);
    // SQLite: the host's own store never waits for the write lock on its event loop (issue 17 item 1).
    // The host's store and its workers' take their settings from config (RFC 1: one TTL bounds a transaction).
    const storeSettings = { sqliteSynchronous: config.sqliteSynchronous, transactionBoundMs: config.leaseTtlMs };
    this.store = options.store ?? openHostStore(config.database, storeSettings);
    // Providers read through a connection the database refuses writes on, bounded per statement
    // by the discovery deadline (RFC 1); opened on first use.
    this.providerRead = lazyReadHandle(config.database.backend, () =>
      openReadHandle(this.accounts.reader, { statementTimeoutMs: config.discoveryTimeoutMs, isolated: true }),
    );
    this.holderId = options.holderId ?? newHolderId();
    for (const f of config.families) this.byFamily.set(f.registration.family, { bindingName: f.registration.bindingName });
    if (config.role === 'api') return;

    const makeSupervisor = (key: string) =>
      new Supervisor(this.store, {
        supervisorKey: key,
        holderId: this.holderId,
        ttlMs: config.leaseTtlMs,
        renewEveryMs: config.renewEveryMs,
        pollEveryMs: config.pollEveryMs,
        logger,
        clock: this.clock,
      });
    const global = config.mode === 'global' ? makeSupervisor('global') : null;
    if (global) this.supervisors.push(global);
    for (const familyConfig of config.families) {
      const supervisor = global ?? makeSupervisor(`artifact:${familyConfig.registration.family}`);
      if (!global) this.supervisors.push(supervisor);
      const pool = new WorkerPool({
        family: familyConfig.registration.family,
        processorModule: familyConfig.registration.processor.module,
        processorExport: familyConfig.registration.processor.exportName,
        principal: backgroundPrincipal(config.trustedPrincipalId, familyConfig.registration.family),
        databaseUrl: childDatabase(this.accounts, config.leaseTtlMs, logger, { family: familyConfig.registration.family }, options.workerClock ?? this.clock),
        timeoutMs: familyConfig.workerTimeoutMs,
        graceMs: config.terminateGraceMs,
        maxIdle: familyConfig.maxWorkers,
        logger,
        env: { ...hostStoreEnv(storeSettings), ...options.workerEnv },
        clock: options.workerClock ?? this.clock,
      });
      const partition = new FamilyPartition(
        familyConfig,
        this.store,
        pool,
        {
          readyQueueSize: config.readyQueueSize,
          scanPageSize: config.scanPageSize,
          retryBaseMs: config.retryBaseMs,
          retryMaxMs: config.retryMaxMs,
          conflictRetryMs: config.conflictRetryMs,
          discoveryTimeoutMs: config.discoveryTimeoutMs,
        },
        {
          wake: () => supervisor.wake(),
          termLost: (term) => supervisor.termLost(term),
          currentTerm: () => supervisor.term,
          dispatchTerm: () => supervisor.dispatchTerm,
          providerRead: this.providerRead,
        },
        logger,
        this.clock,
      );
      supervisor.partitions.push(partition);
      this.pools.push(pool);
      this.byFamily.set(familyConfig.registration.family, { partition, supervisor, bindingName: familyConfig.registration.bindingName });
    }
  }

  async start(): Promise<void> {
    this.logger.info(
      {
        ...describeConfig(this.config),
        database: redactDatabaseUrl(this.config.database),
        holderId: this.holderId,
        supervisors: this.supervisors.map((s) => s.supervisorKey),
      },
      'artifact processing supervisor starting',
    );
    for (const alias of this.config.aliasesUsed) this.logger.info(alias, 'compatibility alias used');
    // Takeovers end the stale fenced transactions they wait for (issue 40 item 2).
    if (this.supervisors.length > 0)
      this.closeBreaker = await attachFenceBreaker(this.store, this.config.database, this.accounts, this.logger, {
        budgetMs: this.config.leaseTtlMs,
        clock: this.clock,
      });
    // Each invocation's acknowledgement is bound to it by a token of this secret (issue 40): what
    // a processor account restricted by grants needs (a privileged one could write the intent anyway).
    if (this.pools.length > 0 && this.accounts.setup === 'grants') {
      const secret = await this.store.initInvocationSecret(secretCandidate());
      for (const pool of this.pools) pool.useInvocationSecret(secret);
    }
    for (const s of this.supervisors) {
      s.keeper.on('lost', (_term, reason) => {
        if (this.store.backend === 'sqlite') this.onFatal?.(`SQLite term superseded (${reason}): another runtime host started on this database`);
      });
    }
    await Promise.all(this.pools.map((p) => p.prepare())); // before the first dispatch
    await Promise.all(this.supervisors.map((s) => s.start()));
    // Background hosts (leader or standby) keep warm workers: no cold start on the first
    // invocation after a start or a takeover.
    if (this.supervisors.length > 0 && this.config.warmWorkers > 0) {
      for (const pool of this.pools) pool.prewarm(this.config.warmWorkers);
    }
    if (this.store instanceof SqliteStore && this.config.database.backend === 'sqlite' && this.supervisors.length > 0) {
      const wakeAll = () => {
        for (const s of this.supervisors) {
          for (const p of s.partitions) {
            p.notifyRequest();
            p.notifyDirty();
          }
          s.wake();
        }
      };
      // Without the watch nothing would wake this runtime for other processes' commits (RFC 8).
      // Rechecks follow file events in real time, whatever clock the host's timers run on.
      this.unwatch = watchSqliteCommits(this.store.db, this.config.database.file, wakeAll, undefined, (error) => this.onFatal?.(error.message));
      // A commit between the start-up examination and the watch's first data_version read has no
      // event left to wake anyone: look once more now that the watch runs.
      wakeAll();
    }
    for (const s of this.supervisors) {
      const term = s.term;
      this.logger.info(
        { supervisorKey: s.supervisorKey, state: s.keeper.state, supervisorGeneration: term?.supervisorGeneration ?? null, holderId: this.holderId },
        'supervisor started',
      );
    }
  }

  private binding(family: string): { partition?: FamilyPartition; supervisor?: Supervisor; bindingName: string } {
    const entry = this.byFamily.get(family);
    if (!entry) throw new Error(`unknown family ${JSON.stringify(family)}`);
    return entry;
  }

  /** Accepts an explicit request (inside the caller's transaction when tx is given) and wakes the family. */
  async trigger(family: string, scopeId: string, tx?: TxHandle): Promise<IntentSnapshot> {
    const entry = this.binding(family);
    const intent = await this.store.acceptRequest(entry.bindingName, scopeId, tx);
    if (!tx) this.notifyRequest(family, intent.pendingSequence);
    return intent;
  }

  /** Marks ordinary work (inside the caller's transaction when tx is given). */
  async markDirty(family: string, scopeId: string, tx?: TxHandle): Promise<IntentSnapshot> {
    const entry = this.binding(family);
    const intent = await this.store.markDirty(entry.bindingName, scopeId, tx);
    if (!tx) this.notifyDirty(family);
    return intent;
  }

  /** Batched intake (pc_aps_accept_request_batch): up to 1000 requests of one family in one call; one wake-up. */
  async triggerBatch(family: string, scopeIds: readonly string[], tx?: TxHandle): Promise<IntentSnapshot[]> {
    const intents = await this.store.acceptRequestBatch(this.binding(family).bindingName, scopeIds, tx);
    if (!tx) this.notifyRequest(family, Math.min(...intents.map((i) => i.pendingSequence)));
    return intents;
  }

  /** Batched intake (pc_aps_mark_dirty_batch): up to 1000 dirty marks of one family in one call; one wake-up. */
  async markDirtyBatch(family: string, scopeIds: readonly string[], tx?: TxHandle): Promise<IntentSnapshot[]> {
    const intents = await this.store.markDirtyBatch(this.binding(family).bindingName, scopeIds, tx);
    if (!tx) this.notifyDirty(family);
    return intents;
  }

  /**
   * Notifications after the caller's transaction committed: this process's partition, and the
   * other processes through the wake-up channel when one is attached (src/notify/). Pass the
   * key's pending sequence (from the intent row) when known: discovery then need not start from
   * the first page.
   */
  notifyRequest(family: string, pendingSequence?: number): void {
    this.wakeRequest(family, pendingSequence);
    this.notify?.publish('request', pendingSequence === undefined ? family : `${family}\t${pendingSequence}`);
  }

  notifyDirty(family: string): void {
    this.wakeDirty(family);
    this.notify?.publish('dirty', family);
  }

  private wakeRequest(family: string, pendingSequence?: number): void {
    const entry = this.binding(family);
    entry.partition?.notifyRequest(pendingSequence);
    entry.supervisor?.wake();
  }

  private wakeDirty(family: string): void {
    const entry = this.binding(family);
    entry.partition?.notifyDirty();
    entry.supervisor?.wake();
  }

  /** Publishes after commits; a background host also wakes on the other processes' messages (issue 12 item 6). */
  attachNotify(channel: NotifyChannel): void {
    this.notify = channel;
    if (this.supervisors.length > 0) {
      subscribeRuntime(
        channel,
        [...this.byFamily.keys()],
        (f, seq) => this.wakeRequest(f, seq),
        (f) => this.wakeDirty(f),
      );
    }
  }

  async leases(): Promise<LeaseRead[]> {
    const keys = this.config.mode === 'global' ? ['global'] : this.config.families.map((f) => `artifact:${f.registration.family}`);
    return Promise.all(keys.map((k) => this.store.readLease(k)));
  }

  status(): RuntimeStatus {
    return runtimeStatus(this.config, this.holderId, this.supervisors, this.accounts);
  }

  async stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.logger.info({ holderId: this.holderId }, 'shutting down: discovery and dispatch stopped');
      this.unwatch?.();
      await Promise.all(this.supervisors.map((s) => s.stop()));
      await this.closeBreaker?.();
      // A hung connection must not keep the process from ending (the lease then expires).
      let timer: ClockTimer | undefined;
      const closed = await Promise.race([
        Promise.all([this.store.close(), this.providerRead.close()]).then(() => true),
        new Promise<boolean>((r) => {
          timer = this.clock.setTimeout(() => r(false), CLOSE_BOUND_MS);
        }),
      ]).finally(() => timer?.cancel());
      if (!closed) this.logger.warn({ holderId: this.holderId, boundMs: CLOSE_BOUND_MS }, 'database connections did not close in time; leaving them');
      this.logger.info({ holderId: this.holderId }, 'shut down');
    })();
    return this.stopping;
  }
}
