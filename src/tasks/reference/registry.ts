/** The reference task types (default tasks module of `apsup tasks` and the runtime). */
import * as z from 'zod';
import type { TaskTypeDefinition } from '../registry.ts';
import { datasetIntent, fileIntent } from './intents.ts';

const indexFilePayload = z
  .object({
    fileId: z.string().min(1).max(150),
    chunks: z.number().int().positive().max(10_000).optional(),
    chunkDelayMs: z.number().int().nonnegative().max(600_000).optional(),
    failAtChunk: z.number().int().positive().optional(),
  })
  .strict();

const datasetPayload = z
  .object({
    datasetId: z.string().min(1).max(150),
    items: z.number().int().positive().max(1_000_000),
    itemDelayMs: z.number().int().nonnegative().max(600_000).optional(),
    failAtItem: z.number().int().positive().optional(),
  })
  .strict();

export default [
  {
    taskType: 'index-file',
    currentVersion: 1,
    versions: { 0: './index-file-legacy.ts', 1: './index-file.ts' },
    payload: indexFilePayload,
    dedupeKey: (p) => `index-file:${(p as { fileId: string }).fileId}`,
    intent: fileIntent,
  },
  {
    taskType: 'generate-dataset',
    currentVersion: 1,
    versions: { 0: './generate-dataset-legacy.ts', 1: './generate-dataset.ts' },
    payload: datasetPayload,
    resumable: true,
    dedupeKey: (p) => `dataset:${(p as { datasetId: string }).datasetId}`,
    intent: datasetIntent,
  },
] satisfies TaskTypeDefinition[];
