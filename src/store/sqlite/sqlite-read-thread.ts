/**
 * SQLite read handle on a worker thread, for the host (providers): better-sqlite3 runs a
 * statement synchronously and cannot interrupt it, so a slow read on the host's thread would
 * stall every family (RFC 1: provider reads are bounded and cancellable). The thread owns a
 * read-only connection; a read that passes its bound or is aborted rejects at once and the
 * thread is terminated (a new one serves the next read). One read at a time, in order.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { ReadOnlyError } from '../errors.ts';
import { assertReadStatement, type ReadHandle, type ReadOptions, type ReadRow } from '../read-handle.ts';

const OP = 'read handle';
const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');

// Plain CommonJS, evaluated in the thread (no TypeScript loader needed there).
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = ' + Number(workerData.busyTimeoutMs));
db.pragma('query_only = ON');
parentPort.on('message', ({ id, sql, params }) => {
  try {
    const stmt = db.prepare(sql);
    let rows = [];
    if (stmt.reader) rows = stmt.all(...params); else stmt.run(...params);
    parentPort.postMessage({ id, rows });
  } catch (e) {
    parentPort.postMessage({ id, error: { name: e && e.name, message: e && e.message, code: e && e.code } });
  }
});
`;

interface Reply { id: number; rows?: ReadRow[]; error?: { name?: string; message?: string; code?: string } }

/** The thread has stopped or been restarted before it answered. */
export class ReadTimeoutError extends Error {
  constructor(ms: number) {
    super(`read handle: the statement did not finish within ${ms} ms`);
    this.name = 'ReadTimeoutError';
  }
}

export class SqliteThreadReadHandle implements ReadHandle {
  readonly backend = 'sqlite' as const;
  private worker: Worker | null = null;
  private nextId = 1;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly file: string, private readonly statementTimeoutMs = 30_000, private readonly busyTimeoutMs = 5000) {}

  private thread(): Worker {
    if (!this.worker) {
      const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: { driver: DRIVER, file: this.file, busyTimeoutMs: this.busyTimeoutMs } });
      worker.unref();
      worker.on('error', () => undefined); // reported to the waiting read through 'exit'
      worker.on('exit', () => { if (this.worker === worker) this.worker = null; });
      this.worker = worker;
    }
    return this.worker;
  }

  async query(sql: string, params: unknown[] = [], options: ReadOptions = {}): Promise<ReadRow[]> {
    assertReadStatement(OP, sql);
    if (this.closed) throw new ReadOnlyError(OP, 'the read handle is closed');
    const run = this.tail.then(() => this.send(sql, params, options));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private send(sql: string, params: unknown[], { signal }: ReadOptions): Promise<ReadRow[]> {
    signal?.throwIfAborted();
    const worker = this.thread();
    const id = this.nextId++;
    return new Promise<ReadRow[]>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
      };
      const stop = (error: unknown) => {
        finish();
        if (this.worker === worker) this.worker = null;
        void worker.terminate();
        reject(error);
      };
      const onMessage = (reply: Reply) => {
        if (reply.id !== id) return;
        finish();
        if (!reply.error) return resolve(reply.rows ?? []);
        const { name, message, code } = reply.error;
        if (typeof code === 'string' && code.startsWith('SQLITE_READONLY')) return reject(new ReadOnlyError(OP, 'the database refused a write'));
        reject(Object.assign(new Error(message ?? 'read failed'), { name: name ?? 'Error', code }));
      };
      const onExit = () => { finish(); reject(new Error('read handle: the reading thread stopped')); };
      const onAbort = () => stop(signal!.reason);
      worker.on('message', onMessage);
      worker.on('exit', onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
      timer = setTimeout(() => stop(new ReadTimeoutError(this.statementTimeoutMs)), this.statementTimeoutMs);
      worker.postMessage({ id, sql, params });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }
}
