/**
 * The series behind the overview's sparklines: one sample per overview read at most every
 * `spacingMs` (no timer of its own: the console samples when it is looked at), the last `limit`
 * kept. Counters (invocations, failures) are turned into per-interval deltas when read.
 */
export type Sample = { at: number } & Record<string, number | null>;

export class SampleRing {
  private readonly samples: Sample[] = [];

  constructor(
    private readonly limit = 60,
    private readonly spacingMs = 2000,
  ) {}

  /** Adds a sample unless the last one is younger than the spacing; returns whether it was kept. */
  add(sample: Sample): boolean {
    const last = this.samples[this.samples.length - 1];
    if (last && sample.at - last.at < this.spacingMs && sample.at >= last.at) return false;
    this.samples.push(sample);
    if (this.samples.length > this.limit) this.samples.shift();
    return true;
  }

  /** Every series by name; the `counters` as differences between neighbouring samples. */
  series(counters: readonly string[] = []): Record<string, Array<number | null>> & { at: number[] } {
    const out: Record<string, Array<number | null>> = {};
    const names = new Set(this.samples.flatMap((s) => Object.keys(s).filter((k) => k !== 'at')));
    for (const name of names) {
      const values = this.samples.map((s) => s[name] ?? null);
      out[name] = counters.includes(name) ? values.slice(1).map((v, i) => (v === null || values[i] === null ? null : Math.max(0, v - values[i]!))) : values;
    }
    return { ...out, at: this.samples.map((s) => s.at) } as Record<string, Array<number | null>> & { at: number[] };
  }
}
