/**
 * Reference family in the manner of Topic Memory: an ordered source journal per scope, a
 * persisted cursor, and a window limit per invocation (one success may leave work). Strict order:
 * a poisoned source blocks its scope and is never skipped.
 */
import path from 'node:path';
import { SRC_DIR } from '../paths.ts';
import type { FamilyRegistration } from '../registry/registration.ts';
import type { Store, TxHandle } from '../store/types.ts';
import { appendJournal, journalAheadProvider } from './domain.ts';

export const TOPIC_MEMORY_BINDING = 'topic-memory.sources';
export const TOPIC_WINDOW = 3;

export const topicMemory: FamilyRegistration = {
  bindingName: TOPIC_MEMORY_BINDING,
  family: 'topic-memory',
  configPrefix: 'TOPIC_MEMORY',
  schedule: { kind: 'interval', seconds: 300 },
  // From SRC_DIR, not this module's URL: the compiled CLI bundles this module (demo seeding).
  processor: { module: path.join(SRC_DIR, 'families', 'topic-memory.processor.ts') },
  defaults: { maxWorkers: 4, workerTimeoutSeconds: 600 },
  // Calibration: a scope whose journal is ahead of its cursor but has no dirty mark is re-marked
  // (also signals/sources recorded before the switch from a replaced scheduler).
  pendingWork: journalAheadProvider('ref_topic_sources', 'ref_topic_cursors', TOPIC_MEMORY_BINDING),
};

/** Domain API: appends one source to a scope's journal and marks the key dirty in the same transaction. */
export function appendTopicSource(store: Store, scopeId: string, source: { words: number; poison?: boolean }, tx?: TxHandle): Promise<number> {
  return appendJournal(store, 'ref_topic_sources', TOPIC_MEMORY_BINDING, scopeId, { words: source.words, poison: source.poison ? 1 : 0 }, tx);
}
