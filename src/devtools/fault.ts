/**
 * Named crash points of the chaos suite (issue #10, RFC 12 items 6, 9, 10): `faultPoint(name)`
 * does nothing unless APSUP_FAULT_<NAME> is set, as `exit` (SIGKILL of this process: no cleanup,
 * no reply) or `pause:<ms>` (the whole thread stops), optionally `@<n>` to act on the n-th hit
 * only. Only the suite sets these variables.
 */
const hits = new Map<string, number>();

export function faultPoint(name: string): void {
  const spec = process.env[`APSUP_FAULT_${name.toUpperCase()}`];
  if (!spec) return;
  const [action, at] = spec.split('@');
  const n = (hits.get(name) ?? 0) + 1;
  hits.set(name, n);
  if (at !== undefined && n !== Number(at)) return;
  process.stderr.write(`fault point ${name}: ${action} (hit ${n}, pid ${process.pid})\n`);
  if (action === 'exit') process.kill(process.pid, 'SIGKILL');
  else if (action.startsWith('pause:')) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(action.slice(6)));
}
