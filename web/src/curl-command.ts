// curl command lines: the one that sends a first webhook, and the one that
// sends a stored delivery again, byte for byte. A person pastes them into a
// terminal, so every word goes through shellWord: no control character or
// invisible character of a payload ever reaches the terminal as it is.

import type { Delivery } from './delivery.ts';
import { shellWord } from '../../src/platform/text/shell-word.js';

/** One shell word for `text`: single quotes, or `$'…'` with escapes for controls and invisible characters. */
export const shellQuote = shellWord;

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
  'host',
  'content-length',
  'content-type',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'accept-encoding',
  'proxy-connection',
  'proxy-authorization',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
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
 * Linux refuses to start a program with one argument longer than 128 KiB
 * (MAX_ARG_STRLEN): a body quoted longer than this goes to curl through a
 * pipe from `printf`, a shell builtin that no such limit applies to.
 */
export const LONGEST_ARGUMENT = 64 * 1024;

/**
 * A curl command that sends the delivery to the same source on this server
 * again: same query string, Content-Type and sender headers, and exactly the
 * stored bytes. UTF-8 text without NUL goes as `--data-raw`, which curl sends
 * as it is, never reading a file for a leading `@` (or, when long, through
 * `printf` and `--data-binary @-`); anything else through base64.
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
  const word = text === undefined ? undefined : shellQuote(text);
  if (word !== undefined && word.length <= LONGEST_ARGUMENT) {
    parts.push(`--data-raw ${word}`);
    return parts.join(' \\\n  ');
  }
  parts.push('--data-binary @-');
  const feed = word === undefined ? `printf %s ${shellQuote(base64(raw))} | base64 -d` : `printf %s ${word}`;
  return `${feed} | ${parts.join(' \\\n  ')}`;
}
