import type { DeliveryJson } from '../http/schemas.js';

/**
 * Characters a payload must not send to a terminal: C0 and C1 controls
 * (escape sequences, carriage returns, bells), DEL, bidirectional
 * overrides and isolates (text that reads differently than it is), line
 * and paragraph separators, zero-width characters and the BOM.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/gu;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\e' };

/** Makes text safe to print: every unsafe character becomes a visible escape such as `\e`, `\x9b` or `\u202e`. */
export function escapeForTerminal(text: string): string {
  return text.replace(UNSAFE, (char) => {
    const named = NAMED[char];
    if (named !== undefined) return named;
    const code = char.codePointAt(0) ?? 0;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

const UNSAFE_BEYOND_ASCII = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/gu;

/**
 * Compact JSON made safe for a terminal without changing what it means:
 * JSON.stringify already escapes C0 controls; the other unsafe characters
 * can only be inside strings, where `\uXXXX` is the same character.
 */
export function escapeJsonForTerminal(json: string): string {
  return json.replace(UNSAFE_BEYOND_ASCII, (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}

/** "512 B", "1.2 KiB", "5.0 MiB" */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** The first `max` characters of the body as compact JSON, escaped for the terminal. */
export function bodyPreview(delivery: DeliveryJson, max: number): string {
  let text: string;
  if (delivery.body === null || delivery.body === undefined) {
    text = delivery.size === 0 ? '' : `(${delivery.contentType || 'unparsed body'})`;
  } else {
    text = JSON.stringify(delivery.body) ?? '';
  }
  const chars = Array.from(text);
  const cut = chars.length > max ? `${chars.slice(0, Math.max(0, max - 1)).join('')}…` : text;
  return escapeForTerminal(cut);
}

/**
 * One readable line per delivery, as `reception tail` prints it:
 * time, source, method, size, id, verification when there is one, and the
 * start of the body. Every field is escaped: payloads are hostile.
 */
export function deliveryLine(delivery: DeliveryJson, width?: number): string {
  const verification = delivery.verification.status === 'none' ? '' : `  [${delivery.verification.status}]`;
  const head = [
    escapeForTerminal(delivery.receivedAt),
    escapeForTerminal(delivery.source),
    escapeForTerminal(delivery.method),
    formatBytes(delivery.size).padStart(9),
    escapeForTerminal(delivery.id),
  ].join('  ') + verification;
  const room = width === undefined ? 60 : Math.max(20, width - head.length - 3);
  const preview = bodyPreview(delivery, room);
  return preview === '' ? head : `${head}  ${preview}`;
}
