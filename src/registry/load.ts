/**
 * Loads the families module: `apsup run --families <module>` or
 * POWERCONTEXT_SERVER_RUNTIME_FAMILIES_MODULE; its default export is the list of registrations.
 * There is no default: the reference families are a demo, run only by `apsup start` (RFC 11: a
 * family not yet integrated registers no fake background capability under a real name).
 */
import path from 'node:path';
import { importHostModule } from '../child/host-import.ts';
import { SRC_DIR } from '../paths.ts';
import { RegistrationError, validateRegistrations, type FamilyRegistration } from './registration.ts';

export const REFERENCE_FAMILIES_MODULE = path.join(SRC_DIR, 'families', 'reference.ts');

const FAMILIES_HELP =
  "name the deployment's families module with --families <module> (or POWERCONTEXT_SERVER_RUNTIME_FAMILIES_MODULE=<module>), " +
  'a module whose default export lists its family registrations (README, "Hosting your own processors")';

export interface LoadOptions {
  /** Only `apsup start` (the demo) may load the reference families. */
  allowReference?: boolean;
  /** The command, for the refusal message. */
  command?: string;
  /** false for the api role: processor modules need not exist (RFC 8). Default true. */
  requireProcessors?: boolean;
}

export async function loadFamilies(
  modulePath: string | undefined,
  options: LoadOptions = {},
): Promise<{ module: string; registrations: FamilyRegistration[] }> {
  const command = options.command ?? 'run';
  if (modulePath === undefined || modulePath.trim() === '') {
    throw new RegistrationError(
      `apsup ${command} has no families module: ${FAMILIES_HELP}; the reference families are a demo and run only under apsup start (npm start)`,
    );
  }
  const module = path.resolve(modulePath);
  if (module === REFERENCE_FAMILIES_MODULE && !options.allowReference) {
    throw new RegistrationError(
      `the reference families are a demo (stand-ins under the names topic-memory, experience, profile) and run only under apsup start (npm start); for apsup ${command}, ${FAMILIES_HELP}`,
    );
  }
  let mod: Record<string, unknown>;
  try {
    // A precompiled CLI imports the module's compiled graph, else registers tsx only now.
    mod = await importHostModule(module);
  } catch (error) {
    throw new RegistrationError(`cannot load families module ${module}: ${(error as Error).message}`);
  }
  return { module, registrations: validateRegistrations(mod.default, path.dirname(module), { requireProcessors: options.requireProcessors ?? true }) };
}
