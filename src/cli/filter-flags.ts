import { parseDuration } from '../platform/config/duration.js';
import type { DeliveryJson } from '../api/schemas.js';
import { containsText, searchNeedle } from '../search/search-text.js';
import type { FlagSpec, FlagValues } from './usage.js';
import { stringFlag, UsageError } from './usage.js';

/**
 * The filters of `GET /api/deliveries` (CONTRACT 8) as `tail` and `export`
 * take them: the same names and values, checked here first so that a
 * mistake is exit code 2 before anything is asked of the server.
 */
export const FILTER_FLAGS: FlagSpec[] = [
  { name: 'source', type: 'string', value: 'S', help: 'Only deliveries to this source.' },
  {
    name: 'event-type',
    type: 'string',
    value: 'T',
    help: 'Only deliveries of this event type, or with a trailing *, of every type that begins with the rest (invoice.*).',
  },
  { name: 'verification', type: 'string', value: 'V', help: 'Only deliveries whose verification is verified, failed or none.' },
  {
    name: 'since',
    type: 'string',
    value: 'T',
    help: 'Only deliveries received at or after T (RFC 3339, or a duration back from now such as 24h).',
  },
  {
    name: 'until',
    type: 'string',
    value: 'T',
    help: 'Only deliveries received before T (RFC 3339, or a duration back from now).',
  },
  {
    name: 'query',
    short: 'q',
    type: 'string',
    value: 'TEXT',
    help: 'Only deliveries whose raw body or a header value contains TEXT, ignoring case (3 to 256 characters).',
  },
];

export interface CliFilters {
  source?: string;
  eventType?: string;
  verification?: 'verified' | 'failed' | 'none';
  /** ms since the epoch */
  since?: number;
  until?: number;
  query?: string;
}

/** The filter flags, checked. */
export function readFilters(values: FlagValues, now = Date.now()): CliFilters {
  const filters: CliFilters = {};
  const source = stringFlag(values, 'source');
  if (source !== undefined) filters.source = source;
  const eventType = stringFlag(values, 'event-type');
  if (eventType !== undefined) {
    if (eventType === '') throw new UsageError('--event-type: expected an event type, or a prefix ending in *.');
    filters.eventType = eventType;
  }
  const verification = stringFlag(values, 'verification');
  if (verification !== undefined) {
    if (verification !== 'verified' && verification !== 'failed' && verification !== 'none') {
      throw new UsageError(`--verification: expected verified, failed or none, got "${verification}".`);
    }
    filters.verification = verification;
  }
  const since = stringFlag(values, 'since');
  if (since !== undefined) filters.since = parseTime('since', since, now);
  const until = stringFlag(values, 'until');
  if (until !== undefined) filters.until = parseTime('until', until, now);
  const query = stringFlag(values, 'query');
  if (query !== undefined) {
    const length = [...query].length;
    if (length < 3 || length > 256) throw new UsageError(`--query: expected 3 to 256 characters to search for, got ${length}.`);
    filters.query = query;
  }
  return filters;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2}))?$/;

/** True when the text's date and time are on the calendar and the clock: `Date.parse` reads 2026-02-30 as March 2nd. */
function isCalendarDate(text: string): boolean {
  const [year, month, day, hour = 0, minute = 0, second = 0] = text
    .split(/[-Tt :.Zz+]/)
    .slice(0, 6)
    .map(Number);
  if (year === undefined || month === undefined || day === undefined) return false;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59;
}

/**
 * A time as RFC 3339 (a date alone is its midnight UTC; seconds may be left
 * out) or as a duration back from now (24h, 7d), in ms since the epoch.
 */
export function parseTime(flag: string, text: string, now = Date.now()): number {
  const duration = parseDuration(text);
  if (duration !== undefined) return now - duration;
  const time =
    RFC3339.test(text) && isCalendarDate(text) ? Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text) : Number.NaN;
  if (Number.isNaN(time)) {
    throw new UsageError(`--${flag}: expected an RFC 3339 time (2026-11-22T00:00:00Z) or a duration (24h, 7d), got "${text}".`);
  }
  return time;
}

/** The filters as the list API's query parameters. */
export function filterParams(filters: CliFilters): Record<string, string> {
  const params: Record<string, string> = {};
  if (filters.source !== undefined) params.source = filters.source;
  if (filters.eventType !== undefined) params.eventType = filters.eventType;
  if (filters.verification !== undefined) params.verification = filters.verification;
  if (filters.since !== undefined) params.since = new Date(filters.since).toISOString();
  if (filters.until !== undefined) params.until = new Date(filters.until).toISOString();
  if (filters.query !== undefined) params.q = filters.query;
  return params;
}

/**
 * Whether a delivery from the live stream passes the filters that its JSON
 * can answer (all but the source, which the stream filters, and the text,
 * which needs the raw body: see `matchesText`). The same rules as the
 * server's list.
 */
export function matchesFields(delivery: DeliveryJson, filters: CliFilters): boolean {
  const type = delivery.eventType ?? null;
  if (filters.eventType !== undefined) {
    if (filters.eventType.endsWith('*')) {
      const prefix = filters.eventType.slice(0, -1);
      if (type === null || !type.startsWith(prefix)) return false;
    } else if (type !== filters.eventType) return false;
  }
  if (filters.verification !== undefined && delivery.verification.status !== filters.verification) return false;
  const received = Date.parse(delivery.receivedAt);
  if (filters.since !== undefined && received < filters.since) return false;
  if (filters.until !== undefined && received >= filters.until) return false;
  return true;
}

/** Whether the raw body or a header value contains the filter's text, ignoring case, as the server's search decides. */
export function matchesText(delivery: DeliveryJson, raw: Buffer, query: string): boolean {
  return containsText(delivery.headers, raw, searchNeedle(query));
}
