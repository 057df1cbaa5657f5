/**
 * Input of `apsup tasks`: option values validated into one-line errors (TasksUsageError, exit 2),
 * the payload from --payload, --payload - (standard input) or --payload-file, and option values
 * that are negative numbers (`--limit -1` reaches validation instead of a parser ambiguity).
 */
import fs from 'node:fs';

/** Invalid command line or input: one line on stderr, exit code 2, nothing written. */
export class TasksUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TasksUsageError';
  }
}

/** Payload columns are MEDIUMTEXT (16 MiB); refuse larger input before parsing it. */
const MAX_PAYLOAD_BYTES = 16 * 1024 * 1024 - 1;

/**
 * node:util parseArgs reads `--limit -1` as an option followed by another option; join a value
 * that looks like a negative number to its string option (`--limit=-1`) so validation sees it.
 */
export function joinNegativeValues(argv: string[], stringOptions: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    const next = argv[i + 1];
    if (a.startsWith('--') && !a.includes('=') && stringOptions.has(a.slice(2)) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${a}=${next}`);
      i += 1;
    } else out.push(a);
  }
  return out;
}

function readStdin(): string {
  try {
    return fs.readFileSync(0, 'utf8');
  } catch (error) {
    throw new TasksUsageError(`--payload -: standard input could not be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** The submit payload: --payload '<json>', --payload - (stdin) or --payload-file <path>; default {}. */
export function readPayload(payload: string | undefined, payloadFile: string | undefined): unknown {
  if (payload !== undefined && payloadFile !== undefined) throw new TasksUsageError('give either --payload or --payload-file, not both');
  let text: string;
  let source: string;
  if (payloadFile !== undefined) {
    source = `--payload-file ${payloadFile}`;
    try {
      if (fs.statSync(payloadFile).size > MAX_PAYLOAD_BYTES) throw new TasksUsageError(`${source}: larger than 16 MiB`);
      text = fs.readFileSync(payloadFile, 'utf8');
    } catch (error) {
      if (error instanceof TasksUsageError) throw error;
      throw new TasksUsageError(`${source}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  } else if (payload === '-') {
    source = '--payload -';
    text = readStdin();
  } else {
    source = '--payload';
    text = payload ?? '{}';
  }
  if (Buffer.byteLength(text, 'utf8') > MAX_PAYLOAD_BYTES) throw new TasksUsageError(`${source}: larger than 16 MiB`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new TasksUsageError(`${source} must be JSON (${(error as Error).message})`);
  }
}

/** A positive integer option (task id, --limit, --handler-version allows 0). */
export function intOption(name: string, value: string | undefined, min: number, max: number): number {
  const n = Number(value);
  if (value === undefined || !/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new TasksUsageError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value ?? null)}`);
  }
  return n;
}

/** --timeout-seconds: positive, finite, and at least 1 ms once rounded to milliseconds. */
export function timeoutOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds <= 0)
    throw new TasksUsageError(`--timeout-seconds must be a positive, finite number, got ${JSON.stringify(value)}`);
  const ms = Math.round(seconds * 1000);
  if (ms < 1) throw new TasksUsageError(`--timeout-seconds ${value} rounds to 0 ms; the smallest timeout is 0.001 (1 ms)`);
  return ms;
}

/** --older-than-days: a non-negative, finite number of days. */
export function daysOption(value: string | undefined): number {
  const days = Number(value);
  if (value === undefined || value.trim() === '' || !Number.isFinite(days) || days < 0) {
    throw new TasksUsageError(`--older-than-days must be a non-negative number, got ${JSON.stringify(value ?? null)}`);
  }
  return days;
}
