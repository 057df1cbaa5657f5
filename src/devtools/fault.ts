/**
 * Named crash points of the chaos suite (issue #10, RFC 12 items 6, 9, 10): `faultPoint(name)`
 * does nothing unless APSUP_FAULT_<NAME> is set, as `exit` (SIGKILL of this process: no cleanup,
 * no reply) or `pause:<ms>` (the whole thread stops), optionally `@<n>` to act on the n-th hit
 * only. Only the suite sets these variables.
 */
const hits = new Map<string, number>();
// Read once at start (the suite sets them in a process's environment before it starts): the
// points sit on hot paths (every admission page, every business commit).
const specs = new Map<string, string>();
for (const [key, value] of Object.entries(process.env)) {
  if (key.startsWith('APSUP_FAULT_') && value) specs.set(key.slice('APSUP_FAULT_'.length).toLowerCase(), value);
}

export function faultPoint(name: string): void {
  if (specs.size === 0) return;
  const spec = specs.get(name);
  if (!spec) return;
  const [action, at] = spec.split('@');
  const n = (hits.get(name) ?? 0) + 1;
  hits.set(name, n);
  if (at !== undefined && n !== Number(at)) return;
  process.stderr.write(`fault point ${name}: ${action} (hit ${n}, pid ${process.pid})\n`);
  if (action === 'exit') process.kill(process.pid, 'SIGKILL');
  else if (action.startsWith('pause:')) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(action.slice(6)));
}
