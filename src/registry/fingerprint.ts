/**
 * What a candidate runs with, per supervisor key (RFC 8, 10): every process of a deployment
 * agrees on the mode, the binding -> family map and the trigger capabilities (the shared part);
 * background candidates also on schedule, budget and timeout (the execution part, absent for
 * the api role, which needs no execution settings). Each part is a flat map of path -> value,
 * so a refusal can name the first difference.
 */
import crypto from 'node:crypto';
import type { FamilyConfig, RuntimeConfig } from '../config/runtime-config.ts';

export type FingerprintPart = Record<string, string>;

export interface CandidateFingerprint {
  supervisorKey: string;
  shared: FingerprintPart;
  /** null for the api role. */
  execution: FingerprintPart | null;
}

/** Every registered binding accepts explicit requests and dirty marks; a provider adds calibration. */
function capabilities(f: FamilyConfig): string {
  return ['request', 'dirty', ...(f.registration.pendingWork?.remarkDirty ? ['calibration'] : [])].join(',');
}

function sharedOf(config: RuntimeConfig, families: FamilyConfig[]): FingerprintPart {
  const part: FingerprintPart = {
    mode: config.mode,
    bindings: families
      .map((f) => f.registration.bindingName)
      .sort()
      .join(','),
  };
  for (const f of families) {
    const b = f.registration.bindingName;
    part[`binding ${b} family`] = f.registration.family;
    part[`binding ${b} triggers`] = capabilities(f);
  }
  return part;
}

function executionOf(families: FamilyConfig[]): FingerprintPart {
  const part: FingerprintPart = {};
  for (const f of families) {
    const name = f.registration.family;
    part[`family ${name} schedule`] = JSON.stringify(f.schedule);
    part[`family ${name} maxWorkers`] = String(f.maxWorkers);
    part[`family ${name} workerTimeoutMs`] = String(f.workerTimeoutMs);
  }
  return part;
}

/** One fingerprint per supervisor key of the mode: 'global' covers every family. */
export function fingerprintsOf(config: RuntimeConfig): CandidateFingerprint[] {
  const groups =
    config.mode === 'global'
      ? [{ key: 'global', families: config.families }]
      : config.families.map((f) => ({ key: `artifact:${f.registration.family}`, families: [f] }));
  return groups.map(({ key, families }) => ({
    supervisorKey: key,
    shared: sharedOf(config, families),
    execution: config.role === 'api' ? null : executionOf(families),
  }));
}

/** Canonical text (sorted keys) and its sha256. */
export function canonical(part: FingerprintPart): { text: string; sha256: string } {
  const text = JSON.stringify(
    Object.fromEntries(
      Object.keys(part)
        .sort()
        .map((k) => [k, part[k]]),
    ),
  );
  return { text, sha256: crypto.createHash('sha256').update(text).digest('hex') };
}

/** The first path (in sorted order) whose value differs, or null. */
export function firstDifference(mine: FingerprintPart, theirs: FingerprintPart): { path: string; mine: string; theirs: string } | null {
  for (const path of [...new Set([...Object.keys(mine), ...Object.keys(theirs)])].sort()) {
    if (mine[path] !== theirs[path]) return { path, mine: mine[path] ?? '(absent)', theirs: theirs[path] ?? '(absent)' };
  }
  return null;
}
