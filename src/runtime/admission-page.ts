/**
 * What one automatic-scan admission page sends (RFC 2 "单次查询…固定上限"): its size is bounded
 * by configuration, never by the number of keys in backoff.
 *
 * Excluded are only the keys the partition holds ready or running: at most READY_QUEUE_SIZE +
 * the family's budget. Keys in retry-wait (or settling an acknowledgement) are not sent: they
 * owe a request, which admission only reuses (marking the key for this scan), and the partition
 * does not take a busy key into its ready queue, so a retry never starts before its backoff ends.
 */

/** Admission pages read per examination before the other families get their turn. */
export const SCAN_PAGES_PER_EXAMINATION = 4;

export function admissionExclusions(ready: Iterable<string>, running: Iterable<string>): string[] {
  return [...ready, ...running];
}
