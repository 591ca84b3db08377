/**
 * The slow-down a `429` or `503` puts on a whole destination (docs/circuits.md):
 * its send rate is halved (at most down to 1 request a second) and grows
 * back by one request a second for each second in which attempts succeed,
 * never above its `rateLimit`. With a `rateLimit` it halves that; without,
 * it starts from the rate actually sent when throttled (the attempts started
 * in this second or the one before), and the limit is dropped once it has
 * grown back past that. Per process: each instance slows down by what it sees.
 *
 * The pacing holds forwards before their attempt starts (claimed, or not
 * claimed at all), so a wait spends no attempt.
 */
export class Throttle {
  /** Requests a second allowed now; undefined: not throttled. */
  private rate: number | undefined;
  /** Where it stops growing back (the rateLimit, or the rate observed when throttled). */
  private ceiling = Infinity;
  private halvedAt = -Infinity;
  private grewAt = 0;
  private nextAt = 0;
  /** Attempts started in the current second and the one before: the rate observed. */
  private second = 0;
  private thisSecond = 0;
  private lastSecond = 0;

  /** `limit`: the destination's rateLimit in requests a second, if it has one. */
  constructor(private readonly limit: number | undefined) {}

  /** The rate allowed now (requests a second); undefined when not throttled. */
  current(): number | undefined {
    return this.rate;
  }

  /** Ms until the next attempt may start (0: now). */
  msUntilNext(now = Date.now()): number {
    return this.rate === undefined ? 0 : Math.max(0, Math.ceil(this.nextAt - now));
  }

  /** An attempt starts now. */
  started(now = Date.now()): void {
    const second = Math.floor(now / 1000);
    if (second !== this.second) {
      this.lastSecond = second === this.second + 1 ? this.thisSecond : 0;
      this.thisSecond = 0;
      this.second = second;
    }
    this.thisSecond++;
    if (this.rate !== undefined) this.nextAt = Math.max(this.nextAt, now) + 1000 / this.rate;
  }

  /**
   * A `429` or `503` answered an attempt that started at `startedAt`: the
   * rate is halved, once for the attempts that were already under way then.
   * Answers whether it changed.
   */
  throttled(startedAt: number, now = Date.now()): boolean {
    if (startedAt < this.halvedAt) return false;
    if (this.rate === undefined) {
      const observed = Math.max(1, this.thisSecond, this.lastSecond);
      this.ceiling = this.limit ?? observed;
      this.rate = this.ceiling;
    }
    this.rate = Math.max(1, this.rate / 2);
    this.halvedAt = now;
    this.grewAt = now;
    this.nextAt = now + 1000 / this.rate;
    return true;
  }

  /** An attempt succeeded: one more request a second, at most once a second. Answers whether the rate changed. */
  succeeded(now = Date.now()): boolean {
    if (this.rate === undefined || now - this.grewAt < 1000) return false;
    this.grewAt = now;
    this.rate += 1;
    if (this.rate >= this.ceiling) this.rate = undefined;
    return true;
  }
}
