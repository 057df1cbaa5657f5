/**
 * SQLite runs one runtime host process (RFC 8): a second `apsup run` on the same database file
 * would take the permanent term and turn the deployment into a multi-process one. The host holds
 * `<database>.host.lock` (its pid) while it runs; a live holder makes a second start fail with a
 * clear error, a dead one (crash) is replaced.
 */
import fs from 'node:fs';
import path from 'node:path';

export class HostLockError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HostLockError';
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function acquireSqliteHostLock(databaseFile: string): () => void {
  const lockPath = `${path.resolve(databaseFile)}.host.lock`;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const fd = fs.openSync(lockPath, 'wx');
      fs.writeSync(fd, `${process.pid}\n`);
      fs.closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          if (fs.readFileSync(lockPath, 'utf8').trim() === String(process.pid)) fs.unlinkSync(lockPath);
        } catch {
          /* already gone */
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(fs.readFileSync(lockPath, 'utf8').trim(), 10);
      if (alive(holder) && holder !== process.pid) {
        throw new HostLockError(
          `another runtime host (pid ${holder}) already runs on this SQLite database; SQLite supports one host process ` +
            '(run several candidates on MySQL/OceanBase instead)',
        );
      }
      fs.rmSync(lockPath, { force: true }); // stale lock of a crashed host
    }
  }
  throw new HostLockError(`could not take the SQLite host lock ${lockPath}`);
}
