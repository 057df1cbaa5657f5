/** CPU seconds of local processes from /proc (Linux only), for the task probes. */
import { execSync } from 'node:child_process';
import fs from 'node:fs';

/** User + system CPU seconds of one process (0 once it is gone). */
export function cpuSeconds(pid: number): number {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

/** User and system CPU seconds of one process, apart (zeros once it is gone). */
export function cpuSplit(pid: number): { user: number; system: number } {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { user: Number(f[11]) / 100, system: Number(f[12]) / 100 };
  } catch {
    return { user: 0, system: 0 };
  }
}

/** The pid of the local MariaDB or MySQL server. */
export function databaseServerPid(): number {
  const pid = Number(execSync('pgrep -x mariadbd || pgrep -x mysqld').toString().trim().split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error('no local mariadbd/mysqld process');
  return pid;
}

/** The direct children of a process. */
export function childPids(pid: number): number[] {
  try {
    return execSync(`pgrep -P ${pid}`).toString().trim().split('\n').map(Number).filter(Boolean);
  } catch {
    return [];
  }
}
