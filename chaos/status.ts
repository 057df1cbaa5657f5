/** `apsup status --json` of a trial database, and what must hold in it after a drain (issue #10 (6)). */
import { spawn } from 'node:child_process';
import { FAMILIES_MODULE_PATH } from './families.ts';
import type { Violation } from './checker.ts';
import { REPO_ROOT, childEnv } from './procs.ts';

export async function checkStatus(url: string, drained: boolean): Promise<Violation[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'status', '--families', FAMILIES_MODULE_PATH, '--json'], {
    cwd: REPO_ROOT,
    env: childEnv(url, {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => {
    out += String(d);
  });
  child.stderr.on('data', (d) => {
    err += String(d);
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) return [{ invariant: 'status', detail: `apsup status exited ${code}: ${err.slice(-300)}` }];
  let report: {
    supervisors: Array<{ supervisorKey: string; live: boolean; mode: string }>;
    families: Array<{ family: string; owedInvocations: number; ordinaryBacklog: number; scanInProgress: boolean }>;
  };
  try {
    report = JSON.parse(out);
  } catch {
    return [{ invariant: 'status', detail: 'apsup status --json printed no JSON' }];
  }
  const v: Violation[] = [];
  const global = report.supervisors.find((s) => s.supervisorKey === 'global');
  if (!global?.live) v.push({ invariant: 'status', detail: 'no live global supervisor while a candidate runs', rows: report.supervisors });
  if (drained) {
    for (const f of report.families) {
      if (f.owedInvocations !== 0 || f.ordinaryBacklog !== 0)
        v.push({ invariant: 'status', key: f.family, detail: 'drained but status shows owed work or backlog', rows: [f] });
    }
  }
  return v;
}
