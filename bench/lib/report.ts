/** Printing and recording benchmark figures: a table on stdout, raw JSON under bench/results/. */
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.ts';

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

export function printTable(title: string, columns: string[], rows: Array<Array<string | number>>): void {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? formatNumber(c) : c)));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => String(r[i]).length)));
  const line = (r: Array<string | number>) => `| ${r.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  console.log(`\n${title}`);
  console.log(line(columns));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of cells) console.log(line(r));
}

export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 100) return Math.round(n).toLocaleString('en-US');
  return n.toFixed(2);
}

export function machineInfo(): Record<string, unknown> {
  let commit = 'unknown';
  try {
    commit = execSync('git rev-parse --short HEAD', { cwd: PACKAGE_ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    /* not a git checkout */
  }
  return {
    date: new Date().toISOString(),
    commit,
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    // Other processes on this machine (e.g. test suites) share the 2 cores: recorded with every result.
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** bench/results/, or APSUP_BENCH_RESULTS_DIR (smoke runs that must not mix with real results). */
export function resultsDir(): string {
  const dir = process.env.APSUP_BENCH_RESULTS_DIR ? path.resolve(process.env.APSUP_BENCH_RESULTS_DIR) : path.join(PACKAGE_ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** The latest raw result of a suite in resultsDir() (for figures a suite compares with). */
export function latestResult<T>(suite: string): { file: string; data: T } | null {
  const dir = resultsDir();
  const file = fs
    .readdirSync(dir)
    .filter((f) => f.startsWith(`${suite}-`) && f.endsWith('.json'))
    .sort()
    .at(-1);
  if (!file) return null;
  const full = path.join(dir, file);
  const relative = path.relative(process.cwd(), full);
  return { file: relative.startsWith('..') ? full : relative, data: (JSON.parse(fs.readFileSync(full, 'utf8')) as { data: T }).data };
}

export function writeResult(suite: string, data: unknown): string {
  const dir = resultsDir();
  const file = path.join(dir, `${suite}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify({ suite, machine: machineInfo(), data }, null, 2)}\n`);
  return file;
}
