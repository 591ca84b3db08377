import type { DeliveryJson } from '../api/schemas.js';
import { escapeForTerminal } from '../platform/text/terminal-safe.js';
import { ApiClient, ApiError } from './api-client.js';
import { Backoff, describeError, formatDelay, sleep } from './backoff.js';
import { forwardDelivery, targetUnavailable, type ForwardResult } from './forward.js';
import { writeErr } from './process-io.js';

/**
 * What `reception listen` does with each delivery once it has it: send it
 * to the target until the target answers, judge the answer, and count.
 *
 * - The target cannot be reached, times out, or answers 502, 503 or 504:
 *   it is not there right now; the same delivery is sent again with backoff
 *   (up to 15 s apart) until it answers otherwise. Nothing is skipped.
 * - It answers 2xx: succeeded.
 * - It answers 4xx or 5xx (but 502-504): failed. Listen shows it as a
 *   failure and moves on, unless `--retry-failed`: then the delivery is sent
 *   again with the same backoff, up to `--max-attempts` attempts in all
 *   (0: until it succeeds), and is a failure only when they are spent.
 * - 1xx cannot end a request; 3xx (a redirect, not followed) is neither.
 */
export interface RetryPolicy {
  retryFailed: boolean;
  /** Attempts in all for a delivery the target answers 4xx/5xx (with retryFailed); 0 is no limit. */
  maxAttempts: number;
}

export type Verdict = 'succeeded' | 'failed' | 'other';

export function verdictOf(status: number): Verdict {
  if (status >= 200 && status < 300) return 'succeeded';
  if (status >= 400) return 'failed';
  return 'other';
}

export interface Forwarded extends ForwardResult {
  verdict: Verdict;
  attempts: number;
}

/** Sends one delivery until the target answers something final. Undefined when stopped first. */
export async function forwardUntilAnswered(
  forwardTo: URL,
  delivery: DeliveryJson,
  raw: Buffer,
  options: { timeoutMs: number; policy: RetryPolicy; signal: AbortSignal },
): Promise<Forwarded | undefined> {
  const { policy, signal } = options;
  const backoff = new Backoff(250, 15_000);
  let attempts = 0;
  while (!signal.aborted) {
    let reason: string;
    try {
      attempts += 1;
      // Not aborted by Ctrl-C: a forward in flight finishes, so its answer is recorded.
      const result = await forwardDelivery(forwardTo, delivery, raw, { timeoutMs: options.timeoutMs });
      const verdict = verdictOf(result.status);
      const status = `${result.status} ${escapeForTerminal(result.statusText)}`;
      if (targetUnavailable(result.status)) {
        reason = `target unavailable (${status})`;
      } else if (verdict === 'failed' && policy.retryFailed && (policy.maxAttempts === 0 || attempts < policy.maxAttempts)) {
        reason = `target answered ${status} (attempt ${attempts}${policy.maxAttempts === 0 ? '' : ` of ${policy.maxAttempts}`})`;
      } else {
        return { ...result, verdict, attempts };
      }
    } catch (error) {
      reason = `target unavailable (${escapeForTerminal(describeError(error))})`;
    }
    const delay = backoff.next();
    writeErr(`${reason}; retrying seq ${delivery.seq} in ${formatDelay(delay)}`);
    await sleep(delay, signal);
  }
  return undefined;
}

/**
 * Calls the server until it answers: network errors and transient statuses
 * are retried with backoff, anything else is thrown. A server that was
 * never reached is not waited for (`cannotConnect`). Undefined when stopped.
 */
export async function untilAnswered<T>(
  api: ApiClient,
  call: () => Promise<T>,
  what: string,
  signal: AbortSignal,
): Promise<T | undefined> {
  const backoff = new Backoff(250, 10_000);
  while (!signal.aborted) {
    try {
      return await call();
    } catch (error) {
      if (signal.aborted) return undefined;
      if (!api.reached) throw error;
      if (error instanceof ApiError && !error.transient) throw error;
      const delay = backoff.next();
      writeErr(`server unavailable while ${what} (${describeError(error)}); retrying in ${formatDelay(delay)}`);
      await sleep(delay, signal);
    }
  }
  return undefined;
}

/** The body of a delivery, or 'gone' when it was deleted before it could be forwarded. */
export async function rawOrGone(api: ApiClient, id: string): Promise<Buffer | 'gone'> {
  try {
    return await api.getRaw(id);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return 'gone';
    throw error;
  }
}

/** `-> 500 Internal Server Error  3 ms  failed`: red on a terminal for a failure, green for a success. */
export function outcomeText(result: Forwarded, color: boolean): string {
  const status = `${result.status} ${escapeForTerminal(result.statusText)}`.trimEnd();
  const attempts = result.attempts > 1 ? `, ${result.attempts} attempts` : '';
  const mark = result.verdict === 'failed' ? `  failed${attempts}` : result.attempts > 1 ? `  (${result.attempts} attempts)` : '';
  const text = `-> ${status}  ${result.ms} ms${mark}`;
  if (!color || result.verdict === 'other') return text;
  // SGR 31/32 and 39 (default colour): written here rather than through util.styleText, which leaves
  // the text plain whenever stdout is not a terminal, as in tests; the caller decides (stdoutColors).
  return `\u001b[${result.verdict === 'failed' ? 31 : 32}m${text}\u001b[39m`;
}

/** Whether stdout gets colours: a terminal, and NO_COLOR (no-color.org) unset. */
export function stdoutColors(): boolean {
  return process.stdout.isTTY === true && (process.env.NO_COLOR ?? '') === '';
}

/** What listen forwarded since it started, said when it stops. */
export class ListenSummary {
  succeeded = 0;
  other = 0;
  skipped = 0;
  readonly failed: Array<{ seq: number; id: string; status: number }> = [];

  add(delivery: DeliveryJson, result: Forwarded): void {
    if (result.verdict === 'succeeded') this.succeeded += 1;
    else if (result.verdict === 'other') this.other += 1;
    else this.failed.push({ seq: delivery.seq, id: delivery.id, status: result.status });
  }

  /** `forwarded 5: 3 succeeded, 2 failed (seq 4 → 500, seq 7 → 404); send one again with reception replay <id> --to URL` */
  text(forwardTo: string): string {
    const total = this.succeeded + this.other + this.failed.length;
    const parts = [`${this.succeeded} succeeded`, `${this.failed.length} failed`];
    if (this.other > 0) parts.push(`${this.other} answered 1xx/3xx`);
    if (this.skipped > 0) parts.push(`${this.skipped} deleted before they could be sent`);
    let text = `listen: forwarded ${total}: ${parts.join(', ')}`;
    if (this.failed.length > 0) {
      const shown = this.failed.slice(0, 10).map((f) => `seq ${f.seq} ${escapeForTerminal(f.id)} -> ${f.status}`);
      const more = this.failed.length > 10 ? `, and ${this.failed.length - 10} more` : '';
      text += ` (${shown.join('; ')}${more}); send one again with: reception replay <id> --to ${forwardTo}`;
    }
    return text;
  }
}
