/** Runs bin/apsup.mjs (the documented entry point) as a real child process with only the given settings. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const P = 'POWERCONTEXT_SERVER_RUNTIME_';
export const BIN = path.join(ROOT, 'bin/apsup.mjs');
/** Topic Memory under its deployed binding (a real families module). */
export const TOPIC_FAMILIES = path.join(ROOT, 'test/fixtures/legacy/pr1490-families.ts');
export const IDLE_FAMILIES = path.join(ROOT, 'test/fixtures/families/idle.ts');
export const MYSQL_ADMIN_URL = process.env.APSUP_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The environment of a child: none of the parent's runtime settings, the given ones (short names). */
export function childEnv(vars: Record<string, string>, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith(P) && !k.startsWith('NODE_TEST') && !k.startsWith('APSUP_')));
  return { ...base, ...Object.fromEntries(Object.entries(vars).map(([k, v]) => [`${P}${k}`, v])), ...extra };
}

export function spawnCli(
  args: string[],
  vars: Record<string, string>,
  extra: Record<string, string> = {},
): { child: ChildProcess; result: Promise<CliResult>; out: { stdout: string; stderr: string } } {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv(vars, extra), stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d) => {
    out.stdout += String(d);
  });
  child.stderr!.on('data', (d) => {
    out.stderr += String(d);
  });
  // A guard only: a command that does not end is itself the failure.
  const guard = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const result = new Promise<CliResult>((resolve) =>
    child.once('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, ...out });
    }),
  );
  return { child, result, out };
}

export function runCli(args: string[], vars: Record<string, string> = {}, extra: Record<string, string> = {}): Promise<CliResult> {
  return spawnCli(args, vars, extra).result;
}

const dirs: string[] = [];
export function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-cli-'));
  dirs.push(d);
  return d;
}
export function removeTempDirs(): void {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

export async function waitFor<T>(probe: () => T | null | undefined | false, ms: number, what: string): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pids of every live descendant of `pid` (Linux /proc), children first. */
export function descendantPids(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      /* exited meanwhile */
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const c of parents.get(queue.shift()!) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}
