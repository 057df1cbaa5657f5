/** Content-addressed build directories under var/cache (child entries, user modules). */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface CacheFile {
  /** Path relative to the build directory. */
  name: string;
  contents: Uint8Array | string;
}

/**
 * Writes `files` once into `cacheDir`/<hash of names and contents>/ and returns that directory.
 * Written to a private directory and renamed, so a concurrent host never sees half a build; a
 * directory that exists (marked 'complete') is reused as it is.
 */
export function writeContentAddressed(cacheDir: string, files: CacheFile[]): string {
  const hash = crypto.createHash('sha256');
  for (const f of files) hash.update(f.name).update('\0').update(f.contents).update('\0');
  const dir = path.join(cacheDir, hash.digest('hex').slice(0, 16));
  if (fs.existsSync(path.join(dir, 'complete'))) return dir;
  const tmp = `${dir}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
  for (const f of files) {
    const target = path.join(tmp, f.name);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, f.contents);
  }
  fs.writeFileSync(path.join(tmp, 'complete'), '');
  try {
    fs.renameSync(tmp, dir);
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(path.join(dir, 'complete'))) throw error;
  }
  return dir;
}
