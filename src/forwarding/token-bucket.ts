/**
 * A destination's `rateLimit`: `requests` per `perSeconds`, refilled
 * continuously, in milliseconds (the receiving side's RateLimiter answers
 * whole seconds for Retry-After, too coarse to pace sending).
 */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;
  private readonly perMs: number;

  constructor(
    private readonly capacity: number,
    perSeconds: number,
    now = Date.now(),
  ) {
    this.tokens = capacity;
    this.updatedAt = now;
    this.perMs = capacity / (perSeconds * 1000);
  }

  /** Whole tokens available now. */
  available(now = Date.now()): number {
    this.refill(now);
    return Math.floor(this.tokens);
  }

  take(count: number, now = Date.now()): void {
    this.refill(now);
    this.tokens -= count;
  }

  /** Ms until one more token is there. */
  msUntilNext(now = Date.now()): number {
    this.refill(now);
    return this.tokens >= 1 ? 0 : Math.ceil((1 - this.tokens) / this.perMs);
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.capacity, this.tokens + Math.max(0, now - this.updatedAt) * this.perMs);
    this.updatedAt = now;
  }
}
