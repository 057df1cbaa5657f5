/** Locations of the SQL shipped with the package, independent of the working directory. */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SQLITE_SCRIPTS_DIR = path.join(PACKAGE_ROOT, 'sql', 'sqlite');
export const PROCEDURES_DIR = path.join(PACKAGE_ROOT, 'procedures', 'oceanbase');
export const MIGRATIONS_DIR = path.join(PACKAGE_ROOT, 'migrations');
export const SRC_DIR = path.join(PACKAGE_ROOT, 'src');

/**
 * A CommonJS package loaded where it is first needed, not at start: a command that never opens
 * MySQL, Redis or a terminal log never pays for mysql2, ioredis or pino-pretty (CLI start, issue 15).
 */
export const requirePackage = createRequire(import.meta.url);
