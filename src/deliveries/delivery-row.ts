import type { HeaderList } from '../platform/http/header-list.js';
import type { StoredDelivery, VerificationStatus } from './delivery-store.js';
import { unescapeKey } from './dedup-key.js';

/**
 * A `deliveries` row as both SQL backends return it (their migrations give
 * the table the same columns). PostgreSQL hands BIGINT columns back as strings.
 */
export interface DeliveryRow {
  seq: number | string;
  id: string;
  source: string;
  received_at: number | string;
  method: string;
  query: string;
  content_type: string;
  remote_address: string;
  headers: string;
  raw: Buffer;
  verification_status: VerificationStatus;
  verification_scheme: string | null;
  verification_reason: string | null;
  /** As `escapeKey` (dedup-key.ts) made it on both stores; `deliveryFromRow` gives the key back. */
  dedup_key: string | null;
  /** Its event type; '' when it has none, NULL when it was stored before types were kept and not yet filled in. */
  event_type: string | null;
  parsed_body: string | null;
}

export const DELIVERY_COLUMNS = `seq, id, source, received_at, method, query, content_type, remote_address, headers, raw,
  verification_status, verification_scheme, verification_reason, dedup_key, event_type, parsed_body`;

/** `DELIVERY_COLUMNS` of the table aliased `alias`, for joins. */
export function deliveryColumnsOf(alias: string): string {
  return DELIVERY_COLUMNS.split(',')
    .map((column) => `${alias}.${column.trim()}`)
    .join(', ');
}

/** An event type as the `event_type` column keeps it: '' for none (a key column cannot be NULL on every store). */
export function storedEventType(eventType: string | null | undefined): string {
  return eventType ?? '';
}

/** A `deliveries` row, read from either store, as a delivery (its dedup key unescaped). */
export function deliveryFromRow(row: DeliveryRow): StoredDelivery {
  return {
    seq: Number(row.seq),
    id: row.id,
    source: row.source,
    receivedAt: Number(row.received_at),
    method: row.method,
    query: row.query,
    contentType: row.content_type,
    remoteAddress: row.remote_address,
    headers: JSON.parse(row.headers) as HeaderList,
    raw: row.raw,
    verification: {
      status: row.verification_status,
      ...(row.verification_scheme === null ? {} : { scheme: row.verification_scheme }),
      ...(row.verification_reason === null ? {} : { reason: row.verification_reason }),
    },
    dedupKey: row.dedup_key === null ? null : unescapeKey(row.dedup_key),
    ...(row.parsed_body === null ? {} : { parsedBody: row.parsed_body }),
    eventType: row.event_type === null || row.event_type === '' ? null : row.event_type,
  };
}

/** A driver error in one line, with its code (SQLITE_BUSY, 57P01...) when it has one. */
export function describeStoreError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
