/** What identifies one version of a file on disk (inode, size, times); null when it cannot be read. */
import fs from 'node:fs';

export function fileSignature(file: string): string | null {
  try {
    const s = fs.statSync(file, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return null;
  }
}
