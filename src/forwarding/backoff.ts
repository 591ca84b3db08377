/**
 * When a failed attempt is tried again (CONTRACT 6): after
 * `min(maxMs, initialMs × 2^(n−1))` with full jitter (a uniformly random
 * wait between 0 and that, so that many forwards that failed together do
 * not come back together), or after the destination's `Retry-After`.
 */
export function backoffMs(n: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(Math.max(0, n - 1), 52));
  return Math.floor(random() * ceiling);
}

/**
 * A `Retry-After` header in ms from `now`: delay-seconds, or an HTTP date
 * (RFC 9110 10.2.3); undefined when absent or unreadable. A date in the past is 0.
 */
export function retryAfterMs(header: string | undefined, now: number): number | undefined {
  const value = header?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+$/.test(value)) return Math.min(Number(value), 1e9) * 1000;
  // An IMF-fixdate names its weekday and GMT; Date.parse takes all three HTTP date forms.
  if (!/[A-Za-z]/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
