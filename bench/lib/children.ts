/** Forks benchmark child processes running TypeScript through tsx, with a ready/go/done protocol. */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

const TSX = import.meta.resolve('tsx');

export interface ForkOptions {
  /** Append the child's stdout and stderr to this file instead of inheriting them (runtime logs). */
  logFile?: string;
  /** Extra node flags before the script (e.g. --expose-gc). */
  execArgv?: string[];
  args?: string[];
  /** The child's whole environment (instead of this process's environment plus env). */
  envOverride?: NodeJS.ProcessEnv;
}

export async function forkReady(script: string, env: NodeJS.ProcessEnv, options: ForkOptions = {}): Promise<ChildProcess> {
  const out: 'inherit' | number = options.logFile ? fs.openSync(options.logFile, 'a') : 'inherit';
  const child = fork(script, options.args ?? [], {
    execArgv: ['--import', TSX, ...(options.execArgv ?? [])],
    env: options.envOverride ?? { ...process.env, ...env },
    stdio: ['ignore', out, out, 'ipc'],
  });
  if (typeof out === 'number') fs.closeSync(out);
  await new Promise<void>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${script} exited during start-up (${code})${options.logFile ? `; see ${options.logFile}` : ''}`));
    child.once('exit', onExit);
    child.on('message', (m: { type: string }) => {
      if (m.type === 'ready') {
        child.off('exit', onExit);
        resolve();
      }
    });
  });
  return child;
}

export function request<T>(child: ChildProcess, message: unknown, reply: string): Promise<T> {
  return new Promise<T>((resolve) => {
    const on = (m: { type: string }) => {
      if (m.type === reply) {
        child.off('message', on);
        resolve(m as T);
      }
    };
    child.on('message', on);
    child.send(message as object);
  });
}

let callSeq = 0;
type Pending = { resolve: (m: unknown) => void; reject: (e: Error) => void; what: string };
const pendingByChild = new WeakMap<ChildProcess, Map<number, Pending>>();

/** One message and one exit listener per child route every reply to its call by id. */
function pendingOf(child: ChildProcess): Map<number, Pending> {
  let pending = pendingByChild.get(child);
  if (!pending) {
    const map = new Map<number, Pending>();
    pending = map;
    pendingByChild.set(child, map);
    child.on('message', (m: { id?: number; type: string; error?: string }) => {
      if (m.id === undefined) return;
      const p = map.get(m.id);
      if (!p) return;
      map.delete(m.id);
      if (m.type === 'error') p.reject(new Error(m.error));
      else p.resolve(m);
    });
    child.once('exit', (code) => {
      for (const p of map.values()) p.reject(new Error(`child exited (${code}) before answering ${p.what}`));
      map.clear();
    });
  }
  return pending;
}

/** Sends {...message, id} and resolves with the reply carrying the same id (concurrent calls allowed). */
export function call<T>(child: ChildProcess, message: Record<string, unknown>): Promise<T> {
  const id = ++callSeq;
  const pending = pendingOf(child);
  return new Promise<T>((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      reject(new Error(`child already exited before ${String(message.type)}`));
      return;
    }
    pending.set(id, { resolve: resolve as (m: unknown) => void, reject, what: String(message.type) });
    child.send({ ...message, id });
  });
}

/** Waits for the exit of a child, killing it with SIGKILL after graceMs. */
export async function waitExit(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Children still alive when the bench process leaves are killed (a failing suite must not leak). */
const tracked = new Set<ChildProcess>();
export function track(child: ChildProcess): ChildProcess {
  tracked.add(child);
  child.once('exit', () => tracked.delete(child));
  return child;
}
process.once('exit', () => {
  for (const c of tracked) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
