/**
 * One way to start and stop a managed child process (the task runner's attempt workers and the
 * supervisor's worker pool): fork the entry (precompiled JavaScript when available, see entry.ts)
 * and terminate it gracefully: SIGTERM, a bounded grace period, then SIGKILL, resolving only once
 * the exit is confirmed (a slot is released on a confirmed exit, never on a signal sent).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { systemClock, type Clock, type ClockTimer } from '../runtime/clock.ts';
import { childEntry, type ChildEntryName } from './entry.ts';

export interface ManagedChild {
  child: ChildProcess;
  /** Resolves on the child's 'exit' (code, signal). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function isAlive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Every managed child of this process not yet seen to exit (a forced exit kills them). */
const live = new Set<ManagedChild>();
let exitHookInstalled = false;

/**
 * Kills (SIGKILL) every managed child still alive and resolves once each exit is confirmed: the
 * forced shutdown (cli/shutdown.ts) leaves no worker behind, not even one that ignores SIGTERM
 * and its parent's disconnect.
 */
export async function killManagedChildren(): Promise<number> {
  const handles = [...live];
  for (const h of handles) if (isAlive(h.child)) h.child.kill('SIGKILL');
  await Promise.all(handles.map((h) => h.exited));
  return handles.length;
}

/** Forks a child entry with an IPC channel (JSON), stdout/stderr inherited. */
export function forkManagedChild(name: ChildEntryName, env: NodeJS.ProcessEnv): ManagedChild {
  const entry = childEntry(name);
  const child = fork(entry.modulePath, [], {
    execArgv: entry.execArgv,
    env: { ...env, ...entry.env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'json',
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const handle = { child, exited };
  live.add(handle);
  void exited.then(() => live.delete(handle));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Backstop for any exit path that did not stop its children (a fatal error, a bounded
    // forced exit): 'exit' handlers run synchronously, a SIGKILL can still be sent.
    process.on('exit', () => {
      for (const h of live) if (isAlive(h.child)) h.child.kill('SIGKILL');
    });
  }
  return handle;
}

/**
 * SIGTERM, wait up to graceMs for the exit, then SIGKILL and wait for the exit. Returns true when
 * the child left within the grace period (or was already gone), false when it had to be killed.
 * `beforeKill` runs right before the SIGKILL (a log line). The grace period runs on `clock`, the
 * pool's (tests drive it instead of waiting).
 */
export async function terminateChild(
  handle: ManagedChild,
  graceMs: number,
  { beforeKill, clock = systemClock }: { beforeKill?: () => void; clock?: Clock } = {},
): Promise<boolean> {
  const { child } = handle;
  if (!isAlive(child)) {
    await handle.exited;
    return true;
  }
  child.kill('SIGTERM');
  let timer: ClockTimer | undefined;
  const graceful = await Promise.race([
    handle.exited.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = clock.setTimeout(() => resolve(false), graceMs);
    }),
  ]);
  timer?.cancel();
  if (graceful || !isAlive(child)) {
    await handle.exited;
    return true;
  }
  beforeKill?.();
  child.kill('SIGKILL');
  await handle.exited;
  return false;
}
