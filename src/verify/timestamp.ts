import type { VerifyFailure } from './verifier.js';

/** Seconds since the epoch, in decimal digits with no sign and no leading zero. */
const SECONDS = /^(?:0|[1-9][0-9]{0,14})$/;

/**
 * Checks a timestamp header in seconds against `nowMs`: absent, not a plain
 * decimal number, or further than `toleranceSeconds` from now in either
 * direction (a stale delivery may be a replay; one from the future would
 * stay replayable for longer than the window) gives the failure; a good one
 * gives undefined.
 */
export function timestampFailure(text: string | undefined, nowMs: number, toleranceSeconds: number): VerifyFailure | undefined {
  if (text === undefined) return 'missing_timestamp';
  if (!SECONDS.test(text)) return 'malformed_timestamp';
  const nowSeconds = Math.floor(nowMs / 1000);
  return Math.abs(nowSeconds - Number(text)) > toleranceSeconds ? 'timestamp_outside_tolerance' : undefined;
}
