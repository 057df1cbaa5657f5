/** Opens graphile-worker, pg-boss and BullMQ; a peer whose server does not answer is returned as skipped. */
import { openGraphileWorker } from './graphile.ts';
import { openPgBoss } from './pg-boss.ts';
import { openBullmq } from './bullmq.ts';
import type { PeerOpen, QueuePeer } from './types.ts';

export interface SkippedPeer {
  name: string;
  reason: string;
}

export async function openPeers(concurrency: number): Promise<{ peers: QueuePeer[]; skipped: SkippedPeer[] }> {
  const opened: PeerOpen[] = [await openGraphileWorker(concurrency), await openPgBoss(concurrency), await openBullmq()];
  const peers: QueuePeer[] = [];
  const skipped: SkippedPeer[] = [];
  for (const p of opened) {
    if (p.ok) peers.push(p.peer);
    else skipped.push({ name: p.name, reason: p.reason });
  }
  return { peers, skipped };
}
