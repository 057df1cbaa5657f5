/** Locations of the SQL shipped with the package, independent of the working directory. */
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SQLITE_SCRIPTS_DIR = path.join(PACKAGE_ROOT, 'sql', 'sqlite');
export const PROCEDURES_DIR = path.join(PACKAGE_ROOT, 'procedures', 'oceanbase');
export const MIGRATIONS_DIR = path.join(PACKAGE_ROOT, 'migrations');
export const SRC_DIR = path.join(PACKAGE_ROOT, 'src');
