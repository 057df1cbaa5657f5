/**
 * SQLite read handle in a child process of its own, for the host (providers): better-sqlite3 runs
 * a statement synchronously and SQLite's interrupt is not reachable through it, so a slow read
 * on the host's thread would stall every family, and even a worker thread could not be stopped
 * before its statement ends (RFC 1: provider reads are bounded and cancellable). The reader
 * process owns a read-only connection and runs a statement only when the engine says it reads
 * (read-program.ts, the same rule); a read that passes its bound or is aborted rejects at once
 * and the process is killed (SIGKILL); a new one serves the next read. One read at a time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { ReadOnlyError } from '../errors.ts';
import { REFUSED_FUNCTIONS, REFUSED_OPCODES } from './program-facts.ts';
import { WRITES } from './read-program.ts';
import { isSqliteReadOnly } from './sqlite-read-handle.ts';
import { sqliteSynchronous } from './synchronous.ts';
import { assertReadStatement } from '../read-statement.ts';
import type { ReadHandle, ReadOptions, ReadRow } from '../types.ts';

const OP = 'read handle';
const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');

// Plain CommonJS, run with `node -e` (no TypeScript loader needed there). It leaves with its parent.
const READER_SOURCE = `
const Database = require(process.env.APSUP_READER_DRIVER);
const db = new Database(process.env.APSUP_READER_FILE, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = ' + Number(process.env.APSUP_READER_BUSY_MS));
db.pragma('query_only = ON');
db.pragma('synchronous = ' + process.env.APSUP_READER_SYNCHRONOUS);
process.on('disconnect', () => process.exit(0));
// judgeRead of read-program.ts, on the lists of program-facts.ts (APSUP_READER_REFUSED).
const REFUSED = JSON.parse(process.env.APSUP_READER_REFUSED);
const refused = (list, name) => (Object.prototype.hasOwnProperty.call(list, name) ? list[name] : null);
const verdicts = new Map();
function judge(sql, params, stmt) {
  if (!stmt.readonly) return { refusal: REFUSED.writes, recycle: true };
  const known = verdicts.get(sql);
  if (known) return known;
  let listing;
  try {
    listing = db.prepare('EXPLAIN ' + sql).all(...params);
  } catch (e) {
    return { refusal: null, recycle: true };
  }
  let refusal = null;
  for (const op of listing) {
    if (refusal) break;
    const reason = refused(REFUSED.ops, op.opcode);
    if (reason) refusal = reason + ' [' + op.opcode + ']';
    else if (op.opcode === 'Function' || op.opcode === 'PureFunc') {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)\\(/.exec(String(op.p4));
      const fn = m ? refused(REFUSED.fns, m[1].toLowerCase()) : null;
      if (fn) refusal = fn + ' [' + m[1].toLowerCase() + ']';
    }
  }
  const verdict = { refusal, recycle: refusal !== null };
  if (verdicts.size >= 1000) verdicts.clear();
  verdicts.set(sql, verdict);
  return verdict;
}
process.on('message', ({ id, sql, params }) => {
  let reply;
  let recycle = false;
  try {
    const stmt = db.prepare(sql);
    const verdict = judge(sql, params, stmt);
    recycle = verdict.recycle;
    if (verdict.refusal) reply = { id, refused: verdict.refusal };
    else {
      let rows = [];
      if (stmt.reader) rows = stmt.all(...params); else stmt.run(...params);
      reply = { id, rows };
    }
  } catch (e) {
    reply = { id, error: { name: e && e.name, message: e && e.message, code: e && e.code } };
  }
  // The parent replaces this process: compiling the statement may have changed its connection.
  if (recycle) reply.recycle = true;
  process.send(reply);
});
process.send({ id: 0 });
`;

interface Reply {
  id: number;
  rows?: ReadRow[];
  /** The engine's reason to refuse the statement (not run). */
  refused?: string;
  /** Compiling the statement may have changed the reader's connection: replace the process. */
  recycle?: boolean;
  error?: { name?: string; message?: string; code?: string };
}

export class ReadTimeoutError extends Error {
  constructor(ms: number) {
    super(`read handle: the statement did not finish within ${ms} ms`);
    this.name = 'ReadTimeoutError';
  }
}

export class SqliteProcessReadHandle implements ReadHandle {
  readonly backend = 'sqlite' as const;
  private reader: ChildProcess | null = null;
  private nextId = 1;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly statementTimeoutMs = 30_000,
    private readonly busyTimeoutMs = 5000,
  ) {}

  private process(): ChildProcess {
    if (!this.reader || this.reader.exitCode !== null || this.reader.signalCode !== null) {
      const child = spawn(process.execPath, ['-e', READER_SOURCE], {
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        env: {
          PATH: process.env.PATH ?? '',
          APSUP_READER_DRIVER: DRIVER,
          APSUP_READER_FILE: this.file,
          APSUP_READER_BUSY_MS: String(this.busyTimeoutMs),
          APSUP_READER_SYNCHRONOUS: sqliteSynchronous(),
          APSUP_READER_REFUSED: JSON.stringify({ ops: REFUSED_OPCODES, fns: REFUSED_FUNCTIONS, writes: WRITES }),
        },
      });
      child.unref();
      child.channel?.unref();
      child.on('error', () => undefined); // reported to the waiting read through 'exit'
      this.reader = child;
    }
    return this.reader;
  }

  async query(sql: string, params: unknown[] = [], options: ReadOptions = {}): Promise<ReadRow[]> {
    assertReadStatement(OP, sql, params);
    if (this.closed) throw new ReadOnlyError(OP, 'the read handle is closed');
    const run = this.tail.then(() => this.send(sql, params, options));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private send(sql: string, params: unknown[], { signal }: ReadOptions): Promise<ReadRow[]> {
    signal?.throwIfAborted();
    const child = this.process();
    const id = this.nextId++;
    return new Promise<ReadRow[]>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = () => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
        child.channel?.unref();
      };
      const stop = (error: unknown) => {
        finish();
        if (this.reader === child) this.reader = null;
        child.kill('SIGKILL');
        reject(error);
      };
      const onMessage = (reply: Reply) => {
        if (reply.id !== id) return;
        finish();
        if (reply.recycle) {
          if (this.reader === child) this.reader = null;
          child.kill('SIGKILL');
        }
        if (reply.refused) return reject(new ReadOnlyError(OP, reply.refused));
        if (!reply.error) return resolve(reply.rows ?? []);
        const { name, message, code } = reply.error;
        if (isSqliteReadOnly(reply.error)) return reject(new ReadOnlyError(OP, 'the database refused a write'));
        reject(Object.assign(new Error(message ?? 'read failed'), { name: name ?? 'Error', code }));
      };
      const onExit = () => {
        finish();
        reject(new Error('read handle: the reader process stopped'));
      };
      const onAbort = () => stop(signal!.reason);
      child.on('message', onMessage);
      child.on('exit', onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
      timer = setTimeout(() => stop(new ReadTimeoutError(this.statementTimeoutMs)), this.statementTimeoutMs);
      child.channel?.ref();
      child.send({ id, sql, params });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const child = this.reader;
    this.reader = null;
    if (child && child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.ref(); // wait for the exit even though the reader does not keep the host alive
        child.kill('SIGKILL');
      });
    }
  }
}
