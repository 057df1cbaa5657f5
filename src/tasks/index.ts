/**
 * `artifact-processing-supervisor/tasks`: durable tasks (ADR): a tasks module default-exports
 * TaskTypeDefinition[]; each handler module default-exports defineTaskHandler({...}). TaskService
 * submits, TaskStore reads and lists.
 */
export { defineTaskHandler, TaskCancelledError, type TaskContext, type TaskHandlerModule, type TaskIdentity } from './handler.ts';
export type { IntentHelpers, TaskIntent, TaskTypeDefinition } from './registry.ts';
export { TaskService, type SubmitRequest } from './service.ts';
export { TaskStore, type TaskDetail, type TaskState, type TaskSummary } from './task-store.ts';
