import type { Logger } from '../../platform/observe/logger.js';
import type { PublishResult } from './publisher.js';
import { guardRefusal } from '../guard-refusal.js';
import { GUARD_ERROR_CODE } from '../network-guard.js';
import { withoutUrlSecrets } from '../url-secrets.js';

/** What every broker publisher is given besides its destination. */
export interface BrokerPublisherOptions {
  logger: Logger;
  /** Header names (lower case) whose values the inbox redacts: not passed on (Redis's `headers` field). */
  redactHeaders: ReadonlySet<string>;
}

export function failed(error: string): PublishResult {
  return { ok: false, status: null, error };
}

/** An attempt that found no connection: failed, and not retried when the guard refused it (CONTRACT 6). */
export function notConnected(error: unknown, url: URL): PublishResult {
  return { ...failed(describeBrokerError(error, url)), ...(guardRefusal(error) === undefined ? {} : { permanent: true }) };
}

/**
 * A broker client's error in one line: the guard's refusal as it is, else
 * the message with the system's code (ECONNREFUSED...) when it has one, cut
 * at 300 characters, and never the URL's credentials.
 */
export function describeBrokerError(error: unknown, url: URL): string {
  let current: unknown = error;
  let text: string | undefined;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (code === GUARD_ERROR_CODE) {
      text = current.message;
      break;
    }
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
      text = current.message.includes(code) ? current.message : `${code}: ${current.message}`;
      break;
    }
    current = current.cause;
  }
  text ??= error instanceof Error ? error.message : String(error);
  // eslint-disable-next-line no-control-regex -- a log line and the API show one line
  return withoutUrlSecrets(text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim(), url).slice(0, 300) || 'unknown error';
}

/**
 * Races `work` against the abort signal (Reception shutting down, after the
 * grace): `aborted` when the signal won. The listener is removed either way.
 */
export async function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | 'aborted'> {
  if (signal.aborted) return 'aborted';
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}

export const ABORTED = 'aborted: Reception is shutting down';
