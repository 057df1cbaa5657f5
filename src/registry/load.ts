/**
 * Loads the families module: `apsup run --families <module>` or
 * POWERCONTEXT_SERVER_RUNTIME_FAMILIES_MODULE; its default export is the list of registrations.
 * Without one, the reference families run.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SRC_DIR } from '../paths.ts';
import { RegistrationError, validateRegistrations, type FamilyRegistration } from './registration.ts';

export const REFERENCE_FAMILIES_MODULE = path.join(SRC_DIR, 'families', 'reference.ts');

export async function loadFamilies(modulePath?: string): Promise<{ module: string; registrations: FamilyRegistration[] }> {
  const module = path.resolve(modulePath ?? REFERENCE_FAMILIES_MODULE);
  let mod: Record<string, unknown>;
  try {
    mod = await import(pathToFileURL(module).href) as Record<string, unknown>;
  } catch (error) {
    throw new RegistrationError(`cannot load families module ${module}: ${(error as Error).message}`);
  }
  return { module, registrations: validateRegistrations(mod.default, path.dirname(module)) };
}
