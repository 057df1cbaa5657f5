/** Bounds of a family's schedule and budget that the runtime can honour (A15). */

/** Node timers hold at most 2^31-1 ms; a longer delay fires after 1 ms (TimeoutOverflowWarning). */
export const TIMER_MAX_SECONDS = 2_147_483;
/** pc_aps_acknowledge_batch and pc_aps_read_intents take at most 1000 keys: one turn of a family's budget. */
export const MAX_WORKERS_MAX = 1000;
/** The interval reaches pc_aps_begin_scan as an INT of seconds. */
export const INTERVAL_MAX_SECONDS = 2_147_483_647;
