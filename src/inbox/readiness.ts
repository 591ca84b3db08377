/** How long a readiness answer is reused, in ms. */
export const READINESS_MAX_AGE_MS = 1000;

/**
 * The store's readiness check (`InboxStore.checkWritable`, a commit) for
 * `/readyz`, run at most once per `maxAgeMs`: calls in between get the
 * last run's result, calls during a run share it. However often a load
 * balancer polls, the store sees at most one probe commit a second, and a
 * change (a full disk, a lock, room again) shows within `maxAgeMs`.
 */
export class ReadinessCheck {
  private last: { startedAt: number; result: Promise<void> } | undefined;

  constructor(
    private readonly probe: () => Promise<void>,
    private readonly maxAgeMs = READINESS_MAX_AGE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  check(): Promise<void> {
    const now = this.now();
    if (this.last === undefined || now - this.last.startedAt >= this.maxAgeMs) {
      const result = this.probe();
      // Kept for later callers; each of them handles the rejection.
      result.catch(() => undefined);
      this.last = { startedAt: now, result };
    }
    return this.last.result;
  }
}
