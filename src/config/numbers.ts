/**
 * Numeric settings (A15): plain decimal text only (no hex, exponent, sign or separators, which
 * Number() would accept) and bounds the code below can honour, checked at start-up.
 */
import { z } from 'zod';

/** Node timers hold at most 2^31-1 ms; a longer delay fires after 1 ms (TimeoutOverflowWarning). */
export const TIMER_MAX_SECONDS = 2_147_483;
/** pc_aps_acquire_term / pc_aps_renew_term accept a TTL of 1000 .. 3,600,000 ms. */
export const LEASE_TTL_MAX_SECONDS = 3600;
/** pc_aps_acknowledge_batch and pc_aps_read_intents take at most 1000 keys: one turn of a family's budget. */
export const MAX_WORKERS_MAX = 1000;
/** The interval reaches pc_aps_begin_scan as an INT of seconds. */
export const INTERVAL_MAX_SECONDS = 2_147_483_647;

const INTEGER = /^\d+$/;
const DECIMAL = /^\d+(?:\.\d+)?$/;

export interface Bounds {
  integer?: boolean;
  /** Inclusive lower bound; 0 allows zero. Default: positive (> 0). */
  min?: number;
  max: number;
}

export function decimal(bounds: Bounds): z.ZodType<number, string> {
  const shape = bounds.integer ? INTEGER : DECIMAL;
  return z.string()
    .regex(shape, bounds.integer ? 'must be a whole decimal number (digits only)' : 'must be a decimal number (digits, optionally a fraction; no sign, exponent or hex)')
    .transform(Number)
    .refine((n) => (bounds.min === undefined ? n > 0 : n >= bounds.min), { message: bounds.min === undefined ? 'must be positive' : `must be at least ${bounds.min}` })
    .refine((n) => n <= bounds.max, { message: `must be at most ${bounds.max}` });
}
