import { TokenBucket } from '../forwarding/token-bucket.js';

/**
 * A source's `rateLimit`: `requests` per `perSeconds` (a token bucket),
 * answering `429 rate_limited` with a `Retry-After` in whole seconds.
 */
export class RateLimiter {
  private readonly bucket: TokenBucket;

  constructor(requests: number, perSeconds: number, now = Date.now()) {
    this.bucket = new TokenBucket(requests, perSeconds, now);
  }

  /** Takes one token; returns 0 when allowed, else the seconds to wait for the next one. */
  take(now = Date.now()): number {
    if (this.bucket.available(now) >= 1) {
      this.bucket.take(1, now);
      return 0;
    }
    return Math.max(1, Math.ceil(this.bucket.msUntilNext(now) / 1000));
  }
}
