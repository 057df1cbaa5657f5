/**
 * Families module of the chaos suite (`apsup run --families chaos/families.ts`): two families
 * served by the workload processor, checked every second, an 8 s worker timeout (a cold worker start under load takes seconds) (the processor's
 * 'timeout' behaviour overruns it) and three workers each.
 */
import { fileURLToPath } from 'node:url';
import type { FamilyRegistration } from '../src/registry/registration.ts';

const PROCESSOR = fileURLToPath(new URL('./processor.ts', import.meta.url));

export const FAMILIES_MODULE_PATH = fileURLToPath(import.meta.url);
export const FAMILIES = ['ch-a', 'ch-b'] as const;
export const bindingOf = (family: string) => `${family}.items`;

const families: FamilyRegistration[] = FAMILIES.map((family) => ({
  bindingName: bindingOf(family),
  family,
  configPrefix: family.toUpperCase().replace(/-/g, '_'),
  schedule: { kind: 'interval', seconds: 1 },
  processor: { module: PROCESSOR },
  defaults: { maxWorkers: 3, workerTimeoutSeconds: 8 },
}));

export default families;
