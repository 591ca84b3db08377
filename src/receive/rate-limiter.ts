/**
 * A token bucket: `requests` per `perSeconds`, refilled continuously. Used
 * per source to answer `429 rate_limited` with a `Retry-After`.
 */
export class RateLimiter {
  private tokens: number;
  private updatedAt: number;
  private readonly ratePerMs: number;

  constructor(private readonly requests: number, perSeconds: number, now = Date.now()) {
    this.tokens = requests;
    this.updatedAt = now;
    this.ratePerMs = requests / (perSeconds * 1000);
  }

  /** Takes one token; returns 0 when allowed, else the seconds to wait for the next one. */
  take(now = Date.now()): number {
    this.tokens = Math.min(this.requests, this.tokens + (now - this.updatedAt) * this.ratePerMs);
    this.updatedAt = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - this.tokens) / this.ratePerMs / 1000));
  }
}
