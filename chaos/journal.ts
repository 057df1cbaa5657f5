/**
 * File protocol between the chaos driver and the workload processor (worker child processes).
 * Everything lives in the directory named by APSUP_CHAOS_DIR:
 *   journal.jsonl            one JSON line per event (start, end, behaviour, overlap), appended
 *                            with O_APPEND so lines of concurrent processes never interleave;
 *   cur-<family>-<scope>     the invocation currently running for a key (pid, term), removed at
 *                            its end: the single-flight probe of the next invocation reads it;
 *   n-<family>-<scope>       invocation counter of a key (entropy of the behaviour choice).
 */
import fs from 'node:fs';
import path from 'node:path';

export { isAlive } from '../src/devtools/processes.ts';

export const DIR_VARIABLE = 'APSUP_CHAOS_DIR';
export const SEED_VARIABLE = 'APSUP_CHAOS_SEED';
export const MISBEHAVE_VARIABLE = 'APSUP_CHAOS_MISBEHAVE';

export interface JournalEvent {
  ev: 'start' | 'end' | 'behaviour' | 'overlap';
  t: number;
  pid: number;
  family: string;
  scope: string;
  sgen: number;
  claimed: number;
  holder?: string;
  [k: string]: unknown;
}

export function journalFile(dir: string): string {
  return path.join(dir, 'journal.jsonl');
}

export function appendEvent(dir: string, event: Omit<JournalEvent, 't' | 'pid'>): void {
  fs.appendFileSync(journalFile(dir), `${JSON.stringify({ t: Date.now(), pid: process.pid, ...event })}\n`);
}

export function readJournal(dir: string): JournalEvent[] {
  let text = '';
  try {
    text = fs.readFileSync(journalFile(dir), 'utf8');
  } catch {
    return [];
  }
  const out: JournalEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as JournalEvent);
    } catch {
      /* a line cut by SIGKILL */
    }
  }
  return out;
}

export const curFile = (dir: string, family: string, scope: string) => path.join(dir, `cur-${family}-${scope}`);

/** Increments and returns the invocation counter of a key. */
export function bumpCounter(dir: string, family: string, scope: string): number {
  const file = path.join(dir, `n-${family}-${scope}`);
  let n = 0;
  try {
    n = Number(fs.readFileSync(file, 'utf8')) || 0;
  } catch {
    /* first */
  }
  fs.writeFileSync(file, String(n + 1));
  return n + 1;
}
