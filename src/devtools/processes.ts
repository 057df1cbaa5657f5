/** Process checks shared by the test suite and the chaos runner (development tooling, Linux /proc). */
import fs from 'node:fs';

const procfs = fs.existsSync('/proc/self/stat');

/** True when pid is a live process: a zombie counts as dead, a stopped one as alive. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (!procfs) return true; // no /proc: kill(0) is all there is
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false; // exited between the two checks
  }
}
