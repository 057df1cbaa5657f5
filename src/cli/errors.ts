/**
 * One line per failure and a documented exit code (README "Exit codes"), from either entry point
 * (bin/apsup.mjs, src/cli/main.ts):
 *   0 done, 1 unexpected (or a database that cannot be reached), 2 bad input or configuration,
 *   3 drift (a migration or procedure differs from its file), 4 adoption refused.
 * APSUP_DEBUG=1 or --verbose adds the stack.
 */
import { ConfigError, DATABASE_URL_VARIABLE, redactDatabaseUrl } from '../config/database-url.ts';
import { readSetting } from '../config/settings.ts';
import { AdoptionRequiredError } from '../migrations/adoption-detect.ts';
import { MigrationDriftError } from '../migrations/catalog.ts';
import { RegistrationError } from '../registry/registration.ts';
import { HostLockError } from '../runtime/sqlite-host-lock.ts';
import { InvalidArgumentError, StoreError } from '../store/errors.ts';
import { UnknownHandlerError } from '../tasks/registry.ts';
import { TasksUsageError } from './tasks-input.ts';

export const EXIT = { ok: 0, unexpected: 1, usage: 2, drift: 3, adoptionRefused: 4 } as const;

/** A command line or input the command refuses before doing anything (exit 2). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A refusal with its own exit code and one-line message (nothing was changed). */
export class CliRefusal extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CliRefusal';
  }
}

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'PROTOCOL_CONNECTION_LOST']);
const MYSQL_CONFIG_CODES = new Set(['ER_ACCESS_DENIED_ERROR', 'ER_BAD_DB_ERROR', 'ER_DBACCESS_DENIED_ERROR', 'ER_NOT_SUPPORTED_AUTH_MODE']);

function databaseName(env: NodeJS.ProcessEnv): string {
  try {
    return redactDatabaseUrl(readSetting('DATABASE_URL', env));
  } catch {
    return 'the database';
  }
}

/** The exit code and the one line for an error (no stack, no credentials). */
export function describeFailure(error: unknown, env: NodeJS.ProcessEnv = process.env): { code: number; message: string } {
  const message = firstLine(error);
  if (error instanceof CliRefusal) return { code: error.exitCode, message };
  if (error instanceof MigrationDriftError) return { code: EXIT.drift, message };
  if (error instanceof AdoptionRequiredError) return { code: EXIT.adoptionRefused, message };
  if (
    error instanceof UsageError ||
    error instanceof ConfigError ||
    error instanceof RegistrationError ||
    error instanceof HostLockError ||
    error instanceof TasksUsageError ||
    error instanceof InvalidArgumentError ||
    error instanceof UnknownHandlerError
  ) {
    return { code: EXIT.usage, message };
  }
  if (error instanceof StoreError && error.code === 'maintenance') {
    return { code: EXIT.usage, message: 'refused: the deployment is in maintenance (apsup maintenance status); nothing was written' };
  }
  const code = String((error as { code?: unknown })?.code ?? '');
  // node:util parseArgs: an unknown option or a missing option value is a usage error.
  if (code.startsWith('ERR_PARSE_ARGS'))
    return { code: EXIT.usage, message: `${message.split('. To specify')[0]!.replace(/\.$/, '')} (apsup <command> --help)` };
  if (CONNECT_CODES.has(code)) return { code: EXIT.unexpected, message: `cannot reach ${databaseName(env)} (${DATABASE_URL_VARIABLE}): ${code}` };
  if (MYSQL_CONFIG_CODES.has(code)) return { code: EXIT.usage, message: `${databaseName(env)} (${DATABASE_URL_VARIABLE}) refused the connection: ${message}` };
  if (code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_PERM' || code === 'EACCES' || code === 'EROFS') {
    return {
      code: EXIT.usage,
      message: `${databaseName(env)} (${DATABASE_URL_VARIABLE}) cannot be written or opened: ${message} (check the file's and its directory's permissions)`,
    };
  }
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT')
    return { code: EXIT.usage, message: `${databaseName(env)} (${DATABASE_URL_VARIABLE}) is not a usable SQLite database: ${message}` };
  return { code: EXIT.unexpected, message };
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split('\n')[0] ?? '').trim() || (error instanceof Error ? error.name : 'failed');
}

export function verboseRequested(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  return argv.includes('--verbose') || /^(1|true|yes)$/i.test(env.APSUP_DEBUG ?? '');
}

/** Prints `apsup: <line>` (and the stack when verbose) and returns the exit code. */
export function reportFailure(error: unknown, verbose: boolean, env: NodeJS.ProcessEnv = process.env): number {
  const { code, message } = describeFailure(error, env);
  console.error(`apsup: ${message}`);
  if (verbose && error instanceof Error && error.stack) console.error(error.stack);
  return code;
}
