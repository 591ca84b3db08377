/**
 * The bytes of webhook bodies held in memory while they arrive, over all
 * requests together, and their bound. Each body is bounded by its source's
 * limit (5 MiB by default), but without a bound on all of them, a thousand
 * senders that each send all but the last byte of 5 MiB would hold 5 GB for
 * the 30 s they are given. Past the bound a body is refused (503, retry
 * later), except when it is the only one arriving: a body within its
 * source's limit always gets through on its own.
 */
export class BodyBudget {
  private held = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes of bodies held while they arrive, now. */
  get bytes(): number {
    return this.held;
  }

  /**
   * Takes `count` more bytes for a body that holds `own` already; false,
   * taking nothing, when that would pass the bound while other bodies hold some.
   */
  take(count: number, own: number): boolean {
    if (this.held > own && this.held + count > this.maxBytes) return false;
    this.held += count;
    return true;
  }

  give(count: number): void {
    this.held -= count;
  }
}

/** A body refused because the bodies arriving hold the bound: load shed on purpose (503, retry later), no failure. */
export class BodyBudgetSpentError extends Error {
  /** `received`: the body's chunks that had arrived, for a refusal's preview. */
  constructor(
    held: number,
    readonly received: readonly Buffer[] = [],
  ) {
    super(`Bodies arriving hold ${held} bytes, the most this server takes at once (RECEPTION_INCOMING_MAX_BYTES).`);
    this.name = 'BodyBudgetSpentError';
  }
}
