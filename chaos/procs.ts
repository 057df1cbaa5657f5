/**
 * Real processes of a trial: `apsup run --families chaos/families.ts` candidates, each in its own
 * process group, with the short tuning of the failover tests (TTL 2 s, renewal 0.4 s). Their
 * workers are found as the candidate's child processes (procfs). Everything started here is
 * killed by killAll() (groups and every worker seen).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { FAMILIES_MODULE_PATH } from './families.ts';
import { isAlive } from './journal.ts';
import { TASKS_MODULE_PATH } from './tasks.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const APSUP_BIN = path.join(REPO_ROOT, 'bin', 'apsup.mjs');
export const TTL_MS = 2000;
export const TASK_LEASE_MS = 3000;
const TUNING: Record<string, string> = {
  POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_LEASE_TTL_SECONDS: '2',
  POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_RENEW_SECONDS: '0.4',
  POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_POLL_SECONDS: '0.2',
  POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_RETRY_BASE_SECONDS: '0.2',
  POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_RETRY_MAX_SECONDS: '1',
  POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_CONFLICT_RETRY_SECONDS: '0.1',
  POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_TERMINATE_GRACE_SECONDS: '1',
  // Small pages, so a scan of a few keys has a middle (the mid_scan crash point).
  POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_SCAN_PAGE_SIZE: '2',
  // Durable tasks beside the families: a short lease, a fast sweep (lost attempts found soon),
  // enough automatic requeues that the faults of one trial do not exhaust a task.
  POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: TASKS_MODULE_PATH,
  POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_LEASE_SECONDS: String(TASK_LEASE_MS / 1000),
  POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_SWEEP_SECONDS: '0.5',
  POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_WAKEUP_POLL_MS: '200',
  POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_MAX_ATTEMPTS: '30',
  POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_TERMINATE_GRACE_SECONDS: '1',
  POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_MAX_TIMEOUT_SECONDS: '60',
  POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_CAPACITY: '2',
};

export function childEnv(url: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('POWERCONTEXT_SERVER_RUNTIME_') || k.startsWith('NODE_TEST') || k.startsWith('APSUP_FAULT_') || k === 'APSUP_LOG_LEVEL') continue;
    env[k] = v;
  }
  return { ...env, ...TUNING, POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: url, APSUP_LOG_LEVEL: 'info', ...extra };
}

const GROUPS = new Set<number>();
const SEEN = new Set<number>();

export class Candidate {
  readonly proc: ChildProcess;
  readonly pid: number;
  holderId: string | null = null;
  exited = false;
  stopped = false;
  readonly tail: string[] = [];
  /** Crash points reached by this candidate or its workers (their stderr lines). */
  readonly faultHits: string[] = [];
  readonly exit: Promise<void>;

  constructor(
    readonly name: string,
    url: string,
    role: 'all' | 'background',
    env: Record<string, string>,
  ) {
    // The CLI's compiled copy, as an operator runs it (bin/apsup.mjs): under tsx each start cost about a CPU-second.
    const args = [APSUP_BIN, 'run', '--families', FAMILIES_MODULE_PATH, '--role', role];
    this.proc = spawn(process.execPath, args, { cwd: REPO_ROOT, env: childEnv(url, env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    if (!this.proc.pid) throw new Error(`${name}: spawn failed`);
    this.pid = this.proc.pid;
    GROUPS.add(this.pid);
    const keep = (line: string) => {
      this.tail.push(line.slice(0, 400));
      if (this.tail.length > 40) this.tail.shift();
    };
    readline.createInterface({ input: this.proc.stdout! }).on('line', (line) => {
      if (line.includes('"holderId"') && !this.holderId) {
        try {
          const l = JSON.parse(line);
          if (l.pid === this.pid && l.holderId) this.holderId = String(l.holderId);
        } catch {
          /* not JSON */
        }
      }
      if (line.includes('"level":50') || line.includes('"level":60') || line.includes('"level":40')) keep(line);
    });
    readline.createInterface({ input: this.proc.stderr! }).on('line', (line) => {
      const hit = /^fault point (\w+):/.exec(line);
      if (hit) this.faultHits.push(hit[1]);
      else keep(line);
    });
    this.exit = new Promise((resolve) =>
      this.proc.once('exit', () => {
        this.exited = true;
        resolve();
      }),
    );
  }

  /** Live worker children (the processes the runtime forked), task workers included. */
  workers(): number[] {
    const pids = childrenOf(this.pid);
    for (const p of pids) SEEN.add(p);
    return pids;
  }

  /** Live children that run durable task attempts (task worker processes), and the others. */
  taskWorkers(): number[] {
    return this.workers().filter(isTaskWorker);
  }

  familyWorkers(): number[] {
    return this.workers().filter((p) => !isTaskWorker(p));
  }

  signal(sig: NodeJS.Signals): void {
    try {
      process.kill(this.pid, sig);
    } catch {
      /* gone */
    }
    if (sig === 'SIGSTOP') this.stopped = true;
    if (sig === 'SIGCONT') this.stopped = false;
  }

  async stop(timeoutMs = 15_000): Promise<void> {
    if (this.exited) return;
    if (this.stopped) this.signal('SIGCONT');
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), timeoutMs);
    await this.exit;
    clearTimeout(timer);
  }
}

/** A task worker process: its command line names the task worker module (or a task pool's). */
export function isTaskWorker(pid: number): boolean {
  try {
    return /task-worker|task-pool/.test(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return false;
  }
}

export function childrenOf(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number).filter(isAlive);
  } catch {
    return [];
  }
}

export function killAll(): void {
  for (const g of GROUPS) {
    try {
      process.kill(-g, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  for (const p of SEEN) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  GROUPS.clear();
  SEEN.clear();
}
