import { newDeliveryId } from '../deliveries/delivery-id.js';
import { MINUTE_MS } from '../platform/config/duration.js';
import type { Logger } from '../platform/observe/logger.js';
import { ISSUE_KINDS, type IssueChange, type IssueKind, type IssueSignals } from './issue-signals.js';
import type { IssueStore, ResolveOutcome } from './issue-store.js';
import { PendingSignals, type Signal } from './pending-signals.js';
import { shownError } from './shown-error.js';

/** Kinds with no "cause cleared" signal of their own: they resolve after a quiet period (CONTRACT 11). */
export const SELF_RESOLVING_KINDS: readonly IssueKind[] = ['verification_failing', 'transform_failing'];

export interface IssueTrackerOptions {
  store: IssueStore;
  logger: Pick<Logger, 'error' | 'warn'>;
  /** Without an occurrence for this long, a self-resolving issue resolves (10 minutes when absent). */
  quietMs?: number;
  /** How often the store is swept for quiet issues (30 s when absent, and never more than the quiet period). */
  sweepMs?: number;
  /** How long signals gather before they are written together (100 ms when absent). */
  flushMs?: number;
  /** After a write the store refused, how long before it is tried again (5 s when absent). */
  retryMs?: number;
  now?: () => number;
}

export const DEFAULT_QUIET_MS = 10 * MINUTE_MS;

/**
 * The issues of one instance (docs/alerts.md): takes the signals of the
 * parts that see trouble (IssueSignals), and writes them to the store off
 * the caller's path. Signals gather for `flushMs` and are summed per kind
 * and subject (1,000 dead letters of one destination are one write); writes
 * run one after another, and a write the store refused is tried again later.
 * A transition is told to the `onChange` listeners once, by the instance
 * whose write made it (the store's answer says so).
 */
export class IssueTracker implements IssueSignals {
  private readonly store: IssueStore;
  private readonly logger: Pick<Logger, 'error' | 'warn'>;
  private readonly quietMs: number;
  private readonly flushMs: number;
  private readonly retryMs: number;
  private readonly now: () => number;
  private readonly listeners = new Set<(change: IssueChange) => void>();
  private pending = new PendingSignals();
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly sweepTimer: NodeJS.Timeout;
  /** The writes, one after another. */
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;
  /** After a refused write: no write before this time (ms). */
  private retryAfter = 0;

  constructor(options: IssueTrackerOptions) {
    this.store = options.store;
    this.logger = options.logger;
    this.quietMs = options.quietMs ?? DEFAULT_QUIET_MS;
    this.flushMs = options.flushMs ?? 100;
    this.retryMs = options.retryMs ?? 5000;
    this.now = options.now ?? Date.now;
    const sweepMs = Math.min(options.sweepMs ?? 30_000, this.quietMs);
    this.sweepTimer = setInterval(() => void this.sweep(), sweepMs);
    this.sweepTimer.unref();
  }

  occurred(kind: IssueKind, subject: string, error: string | null): void {
    if (this.stopped || !known(kind)) return;
    this.pending.occurred(kind, subject, this.now(), error === null ? null : shownError(error));
    this.schedule(this.flushMs);
  }

  cleared(kind: IssueKind, subject: string): void {
    if (this.stopped || !known(kind)) return;
    this.pending.cleared(kind, subject, this.now());
    this.schedule(this.flushMs);
  }

  /** Resolves an issue by id (a person, through the API or the page); the transition is told as any other. */
  async resolve(id: string): Promise<ResolveOutcome> {
    const outcome = await this.store.resolveById(id, this.now());
    if (outcome.status === 'resolved') this.emit({ type: 'issue.resolved', issue: outcome.issue });
    return outcome;
  }

  /** Tells `listener` each transition this instance made; returns how to stop telling it. */
  onChange(listener: (change: IssueChange) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Open issues per kind, from the store (every instance's). */
  openCounts(): Promise<Record<IssueKind, number>> {
    return this.store.countOpen();
  }

  /** Writes what is pending now, and resolves once it is written (or refused, and kept for later). */
  flush(): Promise<void> {
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    return this.serial(() => this.write());
  }

  /** Resolves the quiet self-resolving issues now (the timer does it every `sweepMs`). */
  sweep(): Promise<void> {
    return this.serial(async () => {
      const at = this.now();
      const resolved = await this.store.resolveQuiet(SELF_RESOLVING_KINDS, at - this.quietMs, at);
      for (const issue of resolved) this.emit({ type: 'issue.resolved', issue });
    });
  }

  /** Stops the timers and writes what is pending (one try); signals after this are ignored. */
  async stop(): Promise<void> {
    if (this.stopped) return this.chain;
    clearInterval(this.sweepTimer);
    const last = this.flush();
    this.stopped = true;
    await last;
  }

  private schedule(ms: number): void {
    if (this.flushTimer !== undefined || this.stopped) return;
    const wait = Math.max(ms, this.retryAfter - this.now());
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.serial(() => this.write());
    }, wait);
    this.flushTimer.unref();
  }

  private serial(work: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(work).catch((error: unknown) => {
      this.logger.error({ err: error }, 'issues: the store refused a write');
    });
    return this.chain;
  }

  /**
   * Writes the signals pending, key by key, in the order they came. At the
   * first write the store refuses, that key's rest and every key not yet
   * written go back, in front of what came since; one line is logged, and
   * nothing is written again before `retryMs` (a store that is away is not
   * asked at every signal).
   */
  private async write(): Promise<void> {
    const batch = [...this.pending.take()];
    for (const [n, [key, signals]] of batch.entries()) {
      for (const [i, signal] of signals.entries()) {
        try {
          await this.apply(signal);
        } catch (error) {
          this.pending.putBack(key, signals.slice(i));
          for (const [laterKey, later] of batch.slice(n + 1)) this.pending.putBack(laterKey, later);
          this.retryAfter = this.now() + this.retryMs;
          this.logger.error(
            { err: error, kind: signal.kind, subject: signal.subject, pending: this.pending.size },
            `issues: the store refused a write; tried again in ${this.retryMs} ms`,
          );
          if (!this.stopped) this.schedule(this.retryMs);
          return;
        }
      }
    }
  }

  private async apply(signal: Signal): Promise<void> {
    if (signal.type === 'cleared') {
      const issue = await this.store.resolve(signal.kind, signal.subject, signal.at);
      if (issue !== null) this.emit({ type: 'issue.resolved', issue });
      return;
    }
    const { issue, opened } = await this.store.occur(signal, newDeliveryId(signal.firstAt));
    if (opened) this.emit({ type: 'issue.opened', issue });
  }

  private emit(change: IssueChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.logger.error({ err: error, type: change.type, issueId: change.issue.id }, 'issues: a listener failed');
      }
    }
  }
}

function known(kind: string): kind is IssueKind {
  return (ISSUE_KINDS as readonly string[]).includes(kind);
}
