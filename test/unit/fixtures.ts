/**
 * Shared helpers of the unit tests: family registrations built in code (memory, topic-memory,
 * experience, profile) and environment objects with the POWERCONTEXT_SERVER_RUNTIME_ prefix.
 * parseRuntimeConfig takes the environment as an object, so no test touches process.env.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FamilyRegistration } from '../../src/registry/registration.ts';

export const P = 'POWERCONTEXT_SERVER_RUNTIME_';

/** Directory holding one (empty) processor module per family, so path checks pass. */
export const PROCESSOR_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-processors-'));

export const FAMILY_NAMES = ['memory', 'topic-memory', 'experience', 'profile'] as const;
export type FamilyName = (typeof FAMILY_NAMES)[number];

const BASE: Record<FamilyName, Omit<FamilyRegistration, 'processor'>> = {
  memory: {
    bindingName: 'memory.consolidate',
    family: 'memory',
    configPrefix: 'MEMORY',
    schedule: { kind: 'interval', seconds: 60 },
    defaults: { maxWorkers: 3, workerTimeoutSeconds: 300 },
  },
  'topic-memory': {
    bindingName: 'topic-memory.sources',
    family: 'topic-memory',
    configPrefix: 'TOPIC_MEMORY',
    schedule: { kind: 'interval', seconds: 300 },
    defaults: { maxWorkers: 4, workerTimeoutSeconds: 600 },
  },
  experience: {
    bindingName: 'experience.refresh',
    family: 'experience',
    configPrefix: 'EXPERIENCE',
    schedule: { kind: 'interval', seconds: 900 },
    defaults: { maxWorkers: 2, workerTimeoutSeconds: 1800 },
  },
  profile: {
    bindingName: 'profile.candidates',
    family: 'profile',
    configPrefix: 'PROFILE',
    schedule: { kind: 'cron', expression: '0 2 * * *', timezone: 'Asia/Shanghai' },
    defaults: { maxWorkers: 5, workerTimeoutSeconds: 600 },
  },
};

export function processorPath(family: string): string {
  const file = path.join(PROCESSOR_DIR, `${family}.processor.mjs`);
  if (!fs.existsSync(file)) fs.writeFileSync(file, 'export default { async processScope() {} };\n');
  return file;
}

/** One registration of a known family, with overrides. */
export function registration(family: FamilyName, overrides: Partial<FamilyRegistration> = {}): FamilyRegistration {
  return { ...structuredClone(BASE[family]), processor: { module: processorPath(family) }, ...overrides };
}

/** Registrations of the named families (default: all four). */
export function registrations(...families: FamilyName[]): FamilyRegistration[] {
  return (families.length > 0 ? families : [...FAMILY_NAMES]).map((f) => registration(f));
}

/** An environment object: keys without the prefix get POWERCONTEXT_SERVER_RUNTIME_ prepended. */
export function env(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k.startsWith(P) ? k : `${P}${k}`, v]));
}

process.once('exit', () => fs.rmSync(PROCESSOR_DIR, { recursive: true, force: true }));
