// curl command lines: the one that sends a first webhook, and the one that
// sends a stored delivery again, byte for byte.

import type { Delivery } from './delivery.ts';

/** Quotes for a POSIX shell: everything literal inside single quotes. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The webhook address of a source on this very server. */
export function webhookUrl(origin: string, source: string, query = ''): string {
  return `${origin}/api/webhook/${encodeURIComponent(source)}${query === '' ? '' : `?${query}`}`;
}

/** The line to paste into a terminal to send the first webhook. */
export function firstWebhookCommand(origin: string): string {
  return `curl -X POST ${shellQuote(webhookUrl(origin, 'test'))} -H 'Content-Type: application/json' -d '{"hello": "world"}'`;
}

// Headers that belong to one connection or that curl sets itself.
const NOT_RESENT = new Set([
  'host', 'content-length', 'content-type', 'connection', 'keep-alive', 'transfer-encoding', 'te',
  'trailer', 'upgrade', 'expect', 'accept-encoding', 'proxy-connection', 'proxy-authorization',
  'forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip',
]);
const REDACTED = '[redacted]';

/** The headers worth sending again: the sender's own, minus hop-by-hop ones and redacted values. */
export function resentHeaders(headers: ReadonlyArray<readonly [string, string]>): Array<[string, string]> {
  return headers
    .filter(([name, value]) => !NOT_RESENT.has(name.toLowerCase()) && value !== REDACTED)
    .map(([name, value]) => [name, value]);
}

function decodeUtf8(raw: Uint8Array): string | undefined {
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(raw);
    return text.includes('\0') ? undefined : text;
  } catch {
    return undefined;
  }
}

function base64(raw: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < raw.length; i += 0x8000) {
    binary += String.fromCharCode(...raw.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/**
 * A curl command that sends the delivery to the same source on this server
 * again: same query string, Content-Type and sender headers, and exactly the
 * stored bytes (`--data-raw` for UTF-8 text, which curl sends as it is, never
 * reading a file for a leading `@`; through base64 for anything else).
 * `--globoff`: curl would otherwise read `{a,b}` and `[1-9]` in the query as
 * patterns and send several requests, or refuse the URL.
 */
export function resendCommand(origin: string, delivery: Delivery, raw: Uint8Array): string {
  const parts = [`curl --globoff ${shellQuote(webhookUrl(origin, delivery.source, delivery.query))}`];
  if (delivery.method !== 'POST') parts.push(`-X ${shellQuote(delivery.method)}`);
  if (delivery.contentType !== '') parts.push(`-H ${shellQuote(`Content-Type: ${delivery.contentType}`)}`);
  for (const [name, value] of resentHeaders(delivery.headers)) {
    // curl drops a header given as `Name:` with nothing after it; `Name;` sends it empty.
    parts.push(`-H ${shellQuote(value.trim() === '' ? `${name};` : `${name}: ${value}`)}`);
  }
  const text = decodeUtf8(raw);
  if (text !== undefined) {
    parts.push(`--data-raw ${shellQuote(text)}`);
    return parts.join(' \\\n  ');
  }
  parts.push('--data-binary @-');
  return `printf %s ${shellQuote(base64(raw))} | base64 -d | ${parts.join(' \\\n  ')}`;
}
