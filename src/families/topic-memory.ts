/**
 * Reference family in the manner of Topic Memory: an ordered source journal per scope, a
 * persisted cursor, and a window limit per invocation (one success may leave work). Strict order:
 * a poisoned source blocks its scope and is never skipped.
 */
import { fileURLToPath } from 'node:url';
import type { FamilyRegistration } from '../registry/registration.ts';
import type { Store, TxHandle } from '../store/types.ts';
import { appendJournal } from './domain.ts';

export const TOPIC_MEMORY_BINDING = 'topic-memory.sources';
export const TOPIC_WINDOW = 3;

export const topicMemory: FamilyRegistration = {
  bindingName: TOPIC_MEMORY_BINDING,
  family: 'topic-memory',
  configPrefix: 'TOPIC_MEMORY',
  schedule: { kind: 'interval', seconds: 300 },
  processor: { module: fileURLToPath(new URL('./topic-memory.processor.ts', import.meta.url)) },
  defaults: { maxWorkers: 4, workerTimeoutSeconds: 600 },
  pendingWork: {
    // Calibration: a scope whose journal is ahead of its cursor but has no dirty mark is re-marked.
    async remarkDirty({ markDirty, query, limit, signal }) {
      const rows = await query(
        `SELECT s.scope_id FROM ref_topic_sources s
           LEFT JOIN ref_topic_cursors c ON c.scope_id = s.scope_id
           LEFT JOIN pc_artifact_processing_intents i ON i.binding_name = ? AND i.scope_id = s.scope_id
          WHERE s.seq > COALESCE(c.through_seq, 0)
            AND (i.scope_id IS NULL OR i.dirty_generation = i.clean_generation)
          GROUP BY s.scope_id
          LIMIT ?`,
        [TOPIC_MEMORY_BINDING, limit],
      );
      for (const row of rows) {
        if (signal.aborted) break;
        await markDirty(String(row.scope_id));
      }
      return rows.length;
    },
  },
};

/** Domain API: appends one source to a scope's journal and marks the key dirty in the same transaction. */
export function appendTopicSource(store: Store, scopeId: string, source: { words: number; poison?: boolean }, tx?: TxHandle): Promise<number> {
  return appendJournal(store, 'ref_topic_sources', TOPIC_MEMORY_BINDING, scopeId, { words: source.words, poison: source.poison ? 1 : 0 }, tx);
}
