/**
 * Identifier validation before anything reaches SQL (values are always bound parameters;
 * these checks give a clear error instead of a confusing database one, and keep the
 * comma-separated exclusion list of pc_aps_admit_scan_page unambiguous).
 */
import { InvalidArgumentError } from './errors.ts';

const FAMILY = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
const BINDING = /^[a-z][a-z0-9_.:-]{0,127}$/;
const HOLDER = /^[A-Za-z0-9_.:@-]{1,128}$/;
// Scope ids are opaque to the supervisor: any text of 1..191 characters without commas, without
// control characters, and without leading or trailing whitespace (MySQL/MariaDB/OceanBase
// *_bin collations are PAD SPACE: 'a' and 'a ' would be the same key there but not on SQLite).
const SCOPE_FORBIDDEN = /[,\u0000-\u001f\u007f]|^\s|\s$/;

export function isFamilyName(value: string): boolean {
  return FAMILY.test(value) && value.length <= 120;
}

export function assertSupervisorKey(operation: string, key: string): void {
  if (key === 'global') return;
  if (typeof key === 'string' && key.startsWith('artifact:') && isFamilyName(key.slice('artifact:'.length))) return;
  throw new InvalidArgumentError(operation, `supervisor key must be 'global' or 'artifact:<kebab-case family>', got ${JSON.stringify(key)}`);
}

export function assertBindingName(operation: string, name: string): void {
  if (typeof name !== 'string' || !BINDING.test(name)) {
    throw new InvalidArgumentError(operation, `binding name must match ${BINDING}, got ${JSON.stringify(name)}`);
  }
}

export function assertScopeId(operation: string, scopeId: string): void {
  if (typeof scopeId !== 'string' || scopeId.length < 1 || [...scopeId].length > 191 || SCOPE_FORBIDDEN.test(scopeId)) {
    throw new InvalidArgumentError(operation, 'scope id must be 1..191 characters without commas, control characters or leading/trailing whitespace');
  }
}

export function assertHolderId(operation: string, holderId: string): void {
  if (typeof holderId !== 'string' || !HOLDER.test(holderId)) {
    throw new InvalidArgumentError(operation, `holder id must match ${HOLDER}`);
  }
}

export function assertGeneration(operation: string, what: string, value: number, min = 0): void {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new InvalidArgumentError(operation, `${what} must be an integer >= ${min}, got ${String(value)}`);
  }
}

export function assertPageLimit(operation: string, limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 5000) {
    throw new InvalidArgumentError(operation, `page limit must be an integer in 1..5000, got ${String(limit)}`);
  }
}
