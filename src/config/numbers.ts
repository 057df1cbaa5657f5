/**
 * Numeric settings (A15): plain decimal text only (no hex, exponent, sign or separators, which
 * Number() would accept) and bounds the code below can honour, checked at start-up.
 */
import * as z from 'zod';

import { INTERVAL_MAX_SECONDS, MAX_WORKERS_MAX, TIMER_MAX_SECONDS } from '../schedule/limits.ts';

export { INTERVAL_MAX_SECONDS, MAX_WORKERS_MAX, TIMER_MAX_SECONDS };
/** pc_aps_acquire_term / pc_aps_renew_term accept a TTL of 1000 .. 3,600,000 ms. */
export const LEASE_TTL_MAX_SECONDS = 3600;

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
  return z
    .string()
    .regex(
      shape,
      bounds.integer ? 'must be a whole decimal number (digits only)' : 'must be a decimal number (digits, optionally a fraction; no sign, exponent or hex)',
    )
    .transform(Number)
    .refine((n) => (bounds.min === undefined ? n > 0 : n >= bounds.min), {
      message: bounds.min === undefined ? 'must be positive' : `must be at least ${bounds.min}`,
    })
    .refine((n) => n <= bounds.max, { message: `must be at most ${bounds.max}` });
}
