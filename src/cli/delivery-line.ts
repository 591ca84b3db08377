import type { DeliveryJson } from '../api/schemas.js';
import { escapeForTerminal } from '../platform/text/terminal-safe.js';

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
 * One readable line per delivery, as `reception tail` prints it:
 * time, source, event type (`-` for none), method, size, id, verification
 * when there is one, and the start of the body. Every field is escaped:
 * payloads are hostile.
 */
export function deliveryLine(delivery: DeliveryJson, width?: number): string {
  const verification = delivery.verification.status === 'none' ? '' : `  [${delivery.verification.status}]`;
  const head =
    [
      escapeForTerminal(delivery.receivedAt),
      escapeForTerminal(delivery.source),
      eventTypeText(delivery),
      escapeForTerminal(delivery.method),
      formatBytes(delivery.size).padStart(9),
      escapeForTerminal(delivery.id),
    ].join('  ') + verification;
  const room = width === undefined ? 60 : Math.max(20, width - head.length - 3);
  const preview = bodyPreview(delivery, room);
  return preview === '' ? head : `${head}  ${preview}`;
}
