import type { IssueSignals } from '../issues/issue-signals.js';
import type { DeadLetter } from '../forwarding/outbox/dead-letters.js';
import type { DestinationState, Outbox } from '../forwarding/outbox/outbox.js';
import type { Logger } from '../platform/observe/logger.js';

export interface ForwardIssuesDeps {
  outbox: Outbox;
  /** Where the occurrences go: wrapped so that notify destinations are never a subject (`withoutNotifyDestinations`). */
  signals: IssueSignals;
  /** `alerts.backlogSeconds` in force (a reload may change it). */
  backlogSeconds: () => number;
  /** The names of the destinations Reception sends to, in force (a backlog is theirs: a pull destination's consumers set its pace). */
  pushDestinations: () => Iterable<string>;
  logger: Logger;
  /** Time between sweeps (BACKLOG_SWEEP_MS when absent; tests make it short). */
  intervalMs?: number;
}

/** How often the outbox is looked at for backlogs (and dead letters that cleared). */
export const BACKLOG_SWEEP_MS = 5_000;

/** What a sweep last saw of a destination: in trouble, or not (absent: not seen yet since start). */
type Seen = 'trouble' | 'fine';

/**
 * The outbox's causes of issues (CONTRACT 11, docs/alerts.md "What opens an
 * issue"):
 * - `dead_letters`: each forward the outbox fails is one occurrence on its
 *   destination; cleared when the destination has no failed forward left
 *   (looked at after a retry or a cancel, and at each sweep).
 * - `backlog`: a sweep every few seconds reads what the gauge
 *   `reception_forward_oldest_pending_seconds` reads; a push destination
 *   whose oldest unsettled forward is older than `alerts.backlogSeconds`
 *   is one occurrence when this process first sees it so (not at every
 *   sweep: the count says how often a backlog began, not how long it lasts);
 *   cleared when it is not. A paused destination's backlog counts too.
 * A sweep clears only what changed since the last one (and everything fine at
 * its first), so that a quiet outbox costs the tracker nothing.
 */
export class ForwardIssues {
  private readonly backlogs = new Map<string, Seen>();
  private readonly deadLetters = new Map<string, Seen>();
  /** Dead letters told so far, and the number of each destination's latest: a read that began before it cannot clear it. */
  private letters = 0;
  private readonly latestLetter = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private stopListening: (() => void) | undefined;

  constructor(private readonly deps: ForwardIssuesDeps) {}

  start(): void {
    this.stopListening ??= this.deps.outbox.onDeadLetters((letters) => this.failed(letters));
    this.timer ??= setInterval(() => void this.sweep(), this.deps.intervalMs ?? BACKLOG_SWEEP_MS).unref();
  }

  async stop(): Promise<void> {
    this.stopListening?.();
    this.stopListening = undefined;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  /** After a person retried or cancelled forwards: a destination left with no failed forward has its `dead_letters` cleared. */
  async afterRetryOrCancel(): Promise<void> {
    const before = this.letters;
    const states = await this.deps.outbox.destinations();
    const failing = new Set(states.filter((s) => s.failed > 0).map((s) => s.name));
    for (const [name, seen] of this.deadLetters) {
      if (seen === 'trouble' && !failing.has(name)) this.deadLettersGone(name, before);
    }
    for (const state of states) {
      if (state.failed === 0 && this.deadLetters.get(state.name) !== 'fine') this.deadLettersGone(state.name, before);
    }
  }

  /** One look at the outbox (the timer's; tests call it to not wait). Never rejects. */
  sweep(): Promise<void> {
    this.sweeping ??= this.look()
      .catch((error: unknown) => {
        this.deps.logger.warn(
          { problem: error instanceof Error ? error.message : String(error) },
          'issues: the outbox could not be read for backlogs; trying again at the next sweep',
        );
      })
      .finally(() => {
        this.sweeping = undefined;
      });
    return this.sweeping;
  }

  /**
   * Forwards that went to `failed`: each counts on its destination's
   * `dead_letters`. The outbox's listener calls it, and so does the start of
   * a server whose SQLite recovery failed forwards before the app was built.
   */
  failed(letters: readonly DeadLetter[]): void {
    for (const { destination, error } of letters) {
      this.deadLetters.set(destination, 'trouble');
      this.latestLetter.set(destination, ++this.letters);
      this.deps.signals.occurred('dead_letters', destination, error);
    }
  }

  private async look(): Promise<void> {
    const before = this.letters;
    const states = new Map((await this.deps.outbox.destinations()).map((s) => [s.name, s]));
    const now = Date.now();
    const limitMs = this.deps.backlogSeconds() * 1000;
    const pushed = new Set(this.deps.pushDestinations());
    for (const name of pushed) this.lookAtBacklog(name, states.get(name), now, limitMs);
    // A destination no longer pushed to (removed, or now pulled from) has no backlog of Reception's.
    for (const [name, seen] of this.backlogs) {
      if (!pushed.has(name) && seen === 'trouble') this.backlogState(name, 'fine', null);
    }
    for (const name of new Set([...pushed, ...states.keys(), ...this.deadLetters.keys()])) {
      const failed = states.get(name)?.failed ?? 0;
      if (failed === 0) this.deadLettersGone(name, before);
      // Dead letters another instance made: known to be there, so that this one clears them too.
      else if (!this.deadLetters.has(name)) this.deadLetters.set(name, 'trouble');
    }
  }

  private lookAtBacklog(name: string, state: DestinationState | undefined, now: number, limitMs: number): void {
    const oldest = state?.oldestPendingAt ?? null;
    const ageMs = oldest === null ? 0 : now - oldest;
    if (ageMs <= limitMs) return this.backlogState(name, 'fine', null);
    const paused = state?.paused === true ? ' (the destination is paused)' : '';
    this.backlogState(name, 'trouble', `oldest forward waiting ${Math.round(ageMs / 1000)}s${paused}`);
  }

  private backlogState(name: string, next: Seen, error: string | null): void {
    const before = this.backlogs.get(name);
    if (before === next) return;
    this.backlogs.set(name, next);
    if (next === 'trouble') this.deps.signals.occurred('backlog', name, error);
    else this.deps.signals.cleared('backlog', name);
  }

  /**
   * A read of the outbox that began when `letters` dead letters had been told
   * found none failed for the destination: cleared, unless one was told
   * since (its commit may have come after the read).
   */
  private deadLettersGone(name: string, before: number): void {
    if (this.deadLetters.get(name) === 'fine' || (this.latestLetter.get(name) ?? 0) > before) return;
    this.deadLetters.set(name, 'fine');
    this.deps.signals.cleared('dead_letters', name);
  }
}
