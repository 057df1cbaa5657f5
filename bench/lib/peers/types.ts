/**
 * The peer queues of the dispatch and tasks suites (graphile-worker, pg-boss, BullMQ), one shape:
 * each runs no-op jobs in this process at a given concurrency. A peer whose server does not
 * answer is returned as skipped with the reason, never dropped.
 */
export interface DrainRun {
  jobs: number;
  concurrency: number;
  /** From the workers' start until the last completion. */
  seconds: number;
  perSecond: number;
  /** After the first 10 % of completions. */
  steadyPerSecond: number;
  /** From the first handler start until the last completion (the tasks suite's figure). */
  firstStartPerSecond: number;
}

export interface QueuePeer {
  name: string;
  backend: string;
  /** The server's durability setting, read from the server (e.g. synchronous_commit=on). */
  durability: string;
  /** Notes on how the peer is driven (batch size, polling). */
  notes: string;
  /** N no-op jobs added in bulk (not timed), then workers at `concurrency` until all completed. */
  drain(jobs: number, concurrency: number): Promise<DrainRun>;
  /** Sequential single submits (one job per call, each awaited): jobs/s. */
  submitRate(jobs: number): Promise<number>;
  /** Workers running (warm): paced submits (one every gapMs), submit to handler start in ms, sorted. */
  latency(triggers: number, gapMs: number, concurrency: number): Promise<number[]>;
  close(): Promise<void>;
}

export type PeerOpen = { ok: true; peer: QueuePeer } | { ok: false; name: string; reason: string };

export const now = (): number => performance.timeOrigin + performance.now();
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Completion counter shared by the peers: first start, 10 % mark and the last completion. */
export class DrainClock {
  readonly t0 = now();
  firstStart = 0;
  private tenthAt = 0;
  private done = 0;
  private resolveAll!: () => void;
  readonly finished = new Promise<void>((r) => {
    this.resolveAll = r;
  });
  endAt = 0;

  constructor(
    private readonly jobs: number,
    private readonly concurrency: number,
  ) {}

  started(): void {
    if (!this.firstStart) this.firstStart = now();
  }

  completed(n = 1): void {
    this.done += n;
    if (!this.tenthAt && this.done >= Math.ceil(this.jobs / 10)) this.tenthAt = now();
    if (this.done >= this.jobs && !this.endAt) {
      this.endAt = now();
      this.resolveAll();
    }
  }

  result(): DrainRun {
    const seconds = (this.endAt - this.t0) / 1000;
    const tenth = Math.ceil(this.jobs / 10);
    return {
      jobs: this.jobs,
      concurrency: this.concurrency,
      seconds,
      perSecond: this.jobs / seconds,
      steadyPerSecond: (this.jobs - tenth) / ((this.endAt - this.tenthAt) / 1000),
      firstStartPerSecond: this.jobs / ((this.endAt - (this.firstStart || this.t0)) / 1000),
    };
  }
}

/** Paced submits; `submit(i)` resolves after the job is stored; starts[i] is set by the handler. */
export async function pacedLatency(
  triggers: number,
  gapMs: number,
  submit: (i: number) => Promise<void>,
  starts: Map<number, number>,
  timeoutMs = 60_000,
): Promise<number[]> {
  const submitted = new Map<number, number>();
  const t0 = now();
  for (let i = 0; i < triggers; i += 1) {
    const due = t0 + i * gapMs;
    const wait = due - now();
    if (wait > 0) await sleep(wait);
    submitted.set(i, now());
    await submit(i);
  }
  const deadline = now() + timeoutMs;
  while (starts.size < triggers && now() < deadline) await sleep(20);
  if (starts.size < triggers) throw new Error(`only ${starts.size} of ${triggers} jobs started within ${timeoutMs} ms`);
  return [...submitted.entries()].map(([i, t]) => starts.get(i)! - t).sort((a, b) => a - b);
}

export function redactUrl(url: string): string {
  return url.replace(/:[^:@/]*@/, ':***@');
}
