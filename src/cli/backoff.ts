/** Exponential backoff with a ceiling: 250 ms, 500 ms, 1 s, ... up to `maxMs`, with a little jitter. */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly initialMs = 250,
    private readonly maxMs = 15_000,
  ) {}

  /** The delay before the next attempt; each call doubles it up to the ceiling. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.attempt, 30));
    this.attempt += 1;
    return Math.round(base * (0.85 + Math.random() * 0.3));
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
