/**
 * What the runtime and the task runner do with wake-up messages (issue 12 item 6), kept here so
 * their own modules only attach: a request message wakes that family's owed-request discovery
 * at the key's pending sequence, a dirty message its schedule check, a task message the runner's
 * pending probe. A malformed message or an unknown family is ignored (a hint, never trusted:
 * the database decides what runs). A null payload (after a reconnect) wakes everything once.
 */
import type { NotifyChannel } from './channel.ts';

export function subscribeRuntime(
  channel: NotifyChannel,
  families: readonly string[],
  wakeRequest: (family: string, pendingSequence?: number) => void,
  wakeDirty: (family: string) => void,
): void {
  const known = new Set(families);
  channel.on('request', (payload) => {
    if (payload === null) {
      for (const f of known) wakeRequest(f);
      return;
    }
    const [family, seq] = payload.split('\t');
    if (!known.has(family)) return;
    const n = seq === undefined ? undefined : Number(seq);
    wakeRequest(family, n !== undefined && Number.isSafeInteger(n) && n > 0 ? n : undefined);
  });
  channel.on('dirty', (payload) => {
    if (payload === null) {
      for (const f of known) wakeDirty(f);
    } else if (known.has(payload)) {
      wakeDirty(payload);
    }
  });
}

/** The task runner's probe wakes on every task message (the id is not needed: the probe looks up pending work). */
export function subscribeTaskRunner(channel: NotifyChannel, wake: () => void): () => void {
  return channel.on('task', () => wake());
}
