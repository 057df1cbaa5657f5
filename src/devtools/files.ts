/** Files the test suite's and the chaos runner's processes hand to each other (development tooling). */
import fs from 'node:fs';

/** Writes a file atomically (a private temporary file renamed), so a reader never sees half of it. */
export function writeJsonAtomic(file: string, value: unknown): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(value));
  fs.renameSync(tmp, file);
}
