import type { DeliveryJson } from '../api/schemas.js';
import { displayWidth } from '../platform/text/display-width.js';
import { escapeForTerminal } from '../platform/text/terminal-safe.js';
import { StreamColumns } from './table.js';

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

/** The event type as a line shows it: `-` for none (and from a server that sends none). */
export function eventTypeText(delivery: DeliveryJson): string {
  const type = delivery.eventType ?? null;
  return type === null ? '-' : escapeForTerminal(type);
}

/**
 * The columns of `reception tail`'s lines: time (always 24 characters),
 * source, event type, method, size (on the right), id (a UUID), the
 * verification (empty when there is none), then the start of the body.
 */
export function deliveryColumns(): StreamColumns {
  return new StreamColumns([
    { min: 24, max: 24 },
    { min: 10, max: 32 },
    { min: 14, max: 40 },
    { min: 6, max: 7 },
    { min: 9, max: 12, align: 'right' },
    { min: 36, max: 36 },
    { min: 0, max: 12 },
  ]);
}

/**
 * One readable line per delivery, as `reception tail` prints it, in the
 * columns given (one set for the whole run, so that the lines line up):
 * time, source, event type (`-` for none), method, size, id, verification
 * in brackets when there is one, and the start of the body, cut to what
 * `width` leaves. Every field is escaped before it is padded: payloads are
 * hostile, and an escape is never cut.
 */
export function deliveryLine(delivery: DeliveryJson, width?: number, columns = deliveryColumns()): string {
  const verification = delivery.verification.status === 'none' ? '' : `[${escapeForTerminal(delivery.verification.status)}]`;
  const cells = [
    escapeForTerminal(delivery.receivedAt),
    escapeForTerminal(delivery.source),
    eventTypeText(delivery),
    escapeForTerminal(delivery.method),
    formatBytes(delivery.size),
    escapeForTerminal(delivery.id),
    verification,
  ];
  // The empty last cell: the columns padded (the verification's too), then the body's start.
  const head = columns.line([...cells, '']);
  const room = width === undefined ? 60 : Math.max(20, width - displayWidth(head) - 1);
  const preview = bodyPreview(delivery, room);
  return `${head}${preview}`.trimEnd();
}
