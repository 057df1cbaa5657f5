/**
 * Static task handler registry, keyed by task type. Each type names its handler modules per
 * version (loaded lazily by path), validates payloads with zod before the task row is written,
 * and declares its recovery semantics. Version 0 is the explicit legacy version: it must be listed
 * to be accepted, and uses its documented failure hook. Any version not listed fails closed.
 */
import path from 'node:path';
import type { z } from 'zod';
import { importUserModule } from '../child/ts-loader.ts';
import type { Store, TxHandle } from '../store/types.ts';
import type { TaskHandlerModule } from './handler.ts';

/** What a type's intent hook gets: the task just written, in the submitting transaction. */
export interface TaskIntent {
  taskId: number;
  payload: unknown;
  /** The failed task an explicit resume continues, else null. */
  resumedFromTaskId: number | null;
}

export interface IntentHelpers {
  query(tx: TxHandle, sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  backend: Store['backend'];
}

export interface TaskTypeDefinition {
  taskType: string;
  /** The version new submissions get. */
  currentVersion: number;
  /** Handler module path per version (absolute, or relative to the registry module). */
  versions: Record<number, string>;
  payload: z.ZodType<unknown>;
  /** Only when every side effect is idempotent and fenced: a lost attempt is requeued, not failed. */
  idempotentSideEffects?: boolean;
  /** A failed task may be resumed explicitly (a new task continuing from domain progress). */
  resumable?: boolean;
  /** Dedupe key derived from the payload, if the type deduplicates. */
  dedupeKey?(payload: unknown): string | null;
  /**
   * Creates or links the task's domain rows in the transaction that writes the task (ADR:
   * domain objects with the intent), for a task just created (not a duplicate). Throwing rolls
   * the submission back. Runs in the submitting process: keep it to a few statements.
   */
  intent?(tx: TxHandle, task: TaskIntent, helpers: IntentHelpers): Promise<void>;
}

export class UnknownHandlerError extends Error {
  constructor(
    readonly code: 'unknown_task_type' | 'unknown_handler_version',
    message: string,
  ) {
    super(message);
    this.name = 'UnknownHandlerError';
  }
}

/**
 * importQuery: appended to every handler module URL (a fresh instance per registry);
 * importModule: how a handler module is imported (a host: from its compiled graph).
 */
export interface TaskRegistryOptions {
  importQuery?: string;
  importModule?: (file: string, query: string) => Promise<Record<string, unknown>>;
}

export class TaskRegistry {
  private readonly types = new Map<string, TaskTypeDefinition>();
  private readonly loaded = new Map<string, Promise<TaskHandlerModule>>();
  private readonly failedImports = new Map<string, number>();

  constructor(
    definitions: TaskTypeDefinition[],
    private readonly baseDir: string,
    private readonly options: TaskRegistryOptions = {},
  ) {
    for (const d of definitions) {
      if (this.types.has(d.taskType)) throw new Error(`duplicate task type ${d.taskType}`);
      if (!(d.currentVersion in d.versions)) throw new Error(`task type ${d.taskType}: current version ${d.currentVersion} has no handler module`);
      this.types.set(d.taskType, d);
    }
  }

  definition(taskType: string): TaskTypeDefinition {
    const d = this.types.get(taskType);
    if (!d) throw new UnknownHandlerError('unknown_task_type', `no handler is registered for task type ${JSON.stringify(taskType)}`);
    return d;
  }

  types_(): string[] {
    return [...this.types.keys()];
  }

  /** Every handler module path of every registered type and version. */
  moduleFiles(): string[] {
    return [...this.types.values()].flatMap((d) => Object.keys(d.versions).map((v) => this.modulePath(d.taskType, Number(v))));
  }

  /** Resolves the handler module path of (type, version); unknown versions fail closed. */
  modulePath(taskType: string, version: number): string {
    const d = this.definition(taskType);
    const rel = d.versions[version];
    if (rel === undefined) {
      throw new UnknownHandlerError(
        'unknown_handler_version',
        `task type ${taskType} has no handler version ${version} (known: ${Object.keys(d.versions).join(', ')}); failing closed`,
      );
    }
    return path.isAbsolute(rel) ? rel : path.resolve(this.baseDir, rel);
  }

  /**
   * Lazily imports a handler module (only when a task of that type and version runs). A failed
   * import is not kept: the next call imports again, under a fresh URL, since Node caches a module
   * whose evaluation threw.
   */
  load(taskType: string, version: number): Promise<TaskHandlerModule> {
    const file = this.modulePath(taskType, version);
    let promise = this.loaded.get(file);
    if (!promise) {
      const failed = this.failedImports.get(file) ?? 0;
      const base = this.options.importQuery ?? '';
      const query = failed > 0 ? `${base}${base ? '&' : '?'}retry=${failed}` : base;
      const p: Promise<TaskHandlerModule> = (this.options.importModule ?? importUserModule)(file, query).then((mod) => {
        const handler = (mod.default ?? mod) as TaskHandlerModule;
        if (typeof handler.run !== 'function') throw new Error(`handler module ${file} does not export run()`);
        return handler;
      });
      p.catch(() => {
        if (this.loaded.get(file) !== p) return;
        this.loaded.delete(file);
        this.failedImports.set(file, failed + 1);
      });
      promise = p;
      this.loaded.set(file, promise);
    }
    return promise;
  }

  isLoaded(taskType: string, version: number): boolean {
    try {
      return this.loaded.has(this.modulePath(taskType, version));
    } catch {
      return false;
    }
  }
}
