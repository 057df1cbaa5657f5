/**
 * Families module of the chaos suite (`apsup run --families chaos/families.ts`): two families
 * served by the workload processor, checked every second, two workers each and a 20 s worker
 * timeout (the processor's 'timeout' behaviour overruns it; a cold worker start on a machine at
 * load 40 took over 15 s, and the timeout counts from the start).
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
  defaults: { maxWorkers: 2, workerTimeoutSeconds: 20 },
}));

export default families;
