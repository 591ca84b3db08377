import { backoffMs } from '../forwarding/backoff.js';

/**
 * The command line's reconnects and resends: the forwarder's backoff
 * (`backoffMs`: doubling from `initialMs` up to `maxMs`, full jitter),
 * counted per run of failures and started over by `reset`.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly initialMs = 250,
    private readonly maxMs = 15_000,
  ) {}

  /** The delay before the next attempt; its ceiling doubles with each call, up to `maxMs`. */
  next(): number {
    this.attempt += 1;
    return backoffMs(this.attempt, this.initialMs, this.maxMs);
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Waits `ms`, or less when the signal aborts (it never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** "250 ms", "1.5 s" */
export function formatDelay(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

/** The message of an error, with the cause a failed fetch hides (ECONNREFUSED...). */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (cause instanceof Error && cause.message !== '' && cause.message !== error.message) {
    return `${error.message}: ${cause.message}`;
  }
  return error.message;
}
