import type { IssueSignals } from '../issues/issue-signals.js';

/** Failed signature checks of one source within WINDOW_MS that open `verification_failing` (CONTRACT 11). */
export const FAILURES = 10;
export const WINDOW_MS = 5 * 60_000;

/**
 * Counts each source's failed signature checks in a sliding window, per
 * process (docs/alerts.md "What opens an issue"): the 10th failure within 5
 * minutes is an occurrence of `verification_failing`, and so is each further
 * one while the last 10 fall within 5 minutes. The tracker resolves the issue
 * after 10 quiet minutes. On the receive path: O(1) per failure, nothing
 * per success; only sources that verify (those the config names) can fail,
 * so the map is as large as the config.
 */
export class VerificationWatch {
  /** Per source, the times of its last FAILURES failures, as a ring. */
  private readonly rings = new Map<string, { times: number[]; next: number }>();

  constructor(
    private readonly signals: IssueSignals,
    private readonly now: () => number = Date.now,
  ) {}

  /** One failed check of `source`'s signatures; `failure` is the sentence its sender was answered with. */
  failed(source: string, failure: string): void {
    const now = this.now();
    let ring = this.rings.get(source);
    if (ring === undefined) {
      ring = { times: [], next: 0 };
      this.rings.set(source, ring);
    }
    ring.times[ring.next] = now;
    ring.next = (ring.next + 1) % FAILURES;
    // Full, the ring's next slot holds the oldest of the last FAILURES failures, this one counted.
    const oldest = ring.times.length === FAILURES ? ring.times[ring.next] : undefined;
    if (oldest !== undefined && now - oldest < WINDOW_MS) this.signals.occurred('verification_failing', source, failure);
  }
}
