/**
 * A forked child (task worker, supervisor worker) leaves when its host's IPC channel closes. The
 * channel can close before the child's code listens for it (a host killed while the child loads
 * its modules): then 'disconnect' was already emitted and only `process.connected` tells, and a
 * child holding a database connection would live on, orphaned.
 */
export function exitWithParent(code = 0): void {
  process.on('disconnect', () => process.exit(code));
  if (process.send !== undefined && !process.connected) process.exit(code);
}
