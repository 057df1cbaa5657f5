/** Loads a tasks module: its default export is the list of task type definitions. */
import path from 'node:path';
import { importUserModule } from '../child/ts-loader.ts';
import { SRC_DIR } from '../paths.ts';
import { TaskRegistry, type TaskRegistryOptions, type TaskTypeDefinition } from './registry.ts';

export const REFERENCE_TASKS_MODULE = path.join(SRC_DIR, 'tasks', 'reference', 'registry.ts');

/**
 * `importQuery` (a task worker process: one per attempt) imports the tasks module and, later, its
 * handler modules as fresh module instances. A host loads it with loadHostTaskRegistry.
 */
export async function loadTaskRegistry(modulePath: string, options: TaskRegistryOptions = {}): Promise<TaskRegistry> {
  const file = path.resolve(modulePath);
  const mod = (await importUserModule(file, options.importQuery)) as { default?: TaskTypeDefinition[] };
  if (!Array.isArray(mod.default)) throw new Error(`tasks module ${file} must default-export an array of task type definitions`);
  return new TaskRegistry(mod.default, path.dirname(file), options);
}
