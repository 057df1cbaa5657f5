/** Loads a tasks module: its default export is the list of task type definitions. */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SRC_DIR } from '../paths.ts';
import { TaskRegistry, type TaskTypeDefinition } from './registry.ts';

export const REFERENCE_TASKS_MODULE = path.join(SRC_DIR, 'tasks', 'reference', 'registry.ts');

export async function loadTaskRegistry(modulePath: string): Promise<TaskRegistry> {
  const file = path.resolve(modulePath);
  const mod = await import(pathToFileURL(file).href) as { default?: TaskTypeDefinition[] };
  if (!Array.isArray(mod.default)) throw new Error(`tasks module ${file} must default-export an array of task type definitions`);
  return new TaskRegistry(mod.default, path.dirname(file));
}
