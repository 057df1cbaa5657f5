/**
 * The registry and handler modules of a task worker process (ADR: handlers loaded lazily from the
 * static registry, one instance per executor). Two isolations, DURABLE_TASK_MODULE_ISOLATION:
 *   process  (default) the registry and each handler module are imported once per process and
 *            kept for its later attempts; a tasks module or handler file that changed on disk
 *            (modification time, size or inode) is imported afresh before the attempt that uses it.
 *   attempt  every attempt imports the tasks module and its handler as fresh module instances
 *            (no module state survives an attempt; each import costs milliseconds under tsx).
 * Modules a handler imports itself are shared within the process in both modes.
 */
import path from 'node:path';
import { fileSignature } from '../child/file-signature.ts';
import { loadTaskRegistry } from './load.ts';
import type { TaskRegistry } from './registry.ts';

export type ModuleIsolation = 'process' | 'attempt';

export interface LoadedRegistry {
  registry: TaskRegistry;
  /** True when this attempt imported the registry module (it may import its handler too). */
  imported: boolean;
}

export class HandlerModules {
  private current: { registry: TaskRegistry; tasksSig: string | null; handlerSigs: Map<string, string | null> } | null = null;
  private imports = 0;
  private checked: { key: string; current: HandlerModules['current']; unchanged: boolean } | null = null;

  constructor(
    private readonly isolation: ModuleIsolation,
    private readonly tasksModule: string,
  ) {}

  /** The registry for an attempt of (taskType, version): imported when needed (see the header). */
  async forAttempt(taskType: string, version: number): Promise<LoadedRegistry> {
    if (this.isolation === 'attempt' || !this.current || !this.unchanged(taskType, version)) {
      this.imports += 1;
      const file = path.resolve(this.tasksModule);
      const registry = await loadTaskRegistry(file, { importQuery: `?modules=${this.imports}` });
      this.current = { registry, tasksSig: fileSignature(file), handlerSigs: new Map() };
      this.remember(taskType, version);
      return { registry, imported: true };
    }
    this.remember(taskType, version);
    return { registry: this.current.registry, imported: false };
  }

  /** Whether an attempt of (taskType, version) would start without importing anything. */
  isLoaded(taskType: string, version: number): boolean {
    if (this.isolation === 'attempt' || !this.current) return false;
    return this.current.registry.isLoaded(taskType, version) && this.unchanged(taskType, version);
  }

  private handlerFile(taskType: string, version: number): string | null {
    try {
      return this.current?.registry.modulePath(taskType, version) ?? null;
    } catch {
      return null; // unknown type or version: the registry fails it closed
    }
  }

  private unchanged(taskType: string, version: number): boolean {
    // isLoaded and forAttempt of one attempt ask in the same turn: the files are read once.
    const key = `${taskType}@${version}`;
    if (this.checked?.key === key && this.checked.current === this.current) return this.checked.unchanged;
    const unchanged = this.readUnchanged(taskType, version);
    this.checked = { key, current: this.current, unchanged };
    queueMicrotask(() => {
      this.checked = null;
    });
    return unchanged;
  }

  private readUnchanged(taskType: string, version: number): boolean {
    const c = this.current!;
    if (fileSignature(path.resolve(this.tasksModule)) !== c.tasksSig) return false;
    const file = this.handlerFile(taskType, version);
    if (file === null || !c.handlerSigs.has(file)) return true;
    return fileSignature(file) === c.handlerSigs.get(file);
  }

  private remember(taskType: string, version: number): void {
    const file = this.handlerFile(taskType, version);
    if (file !== null && !this.current!.handlerSigs.has(file)) this.current!.handlerSigs.set(file, fileSignature(file));
  }
}
