import { ProblemError } from '../platform/errors/problem-catalogue.js';
import type { DeliveryFilter } from '../deliveries/delivery-filter.js';
import type { VerificationStatus } from '../deliveries/delivery-store.js';
import { MAX_EVENT_TYPE_LENGTH } from '../event-types/event-type.js';
import { parseRfc3339 } from '../platform/text/rfc3339.js';
import { holdable } from '../platform/db/postgres/text-values.js';
import { sourceFilter } from '../platform/http/query-params.js';

/** The filters of `GET` and `DELETE /api/deliveries` as the query string gives them (CONTRACT 8). */
export interface FilterParams {
  source?: string;
  eventType?: string;
  verification?: string;
  since?: string;
  until?: string;
  q?: string;
}

export const FILTER_PARAMS = ['source', 'eventType', 'verification', 'since', 'until', 'q'] as const;

/** The fewest characters `q` may have: the search index works in trigrams. */
export const MIN_SEARCH_CHARS = 3;
/** The most: a longer text is no search anyone types, and a chunk of the SQLite index overlaps the next by 512 units. */
export const MAX_SEARCH_CHARS = 256;

const VERIFICATIONS: readonly VerificationStatus[] = ['verified', 'failed', 'none'];

/** The filter the parameters ask for; `invalid_query` naming the parameter for a value that is not one. */
export function deliveryFilter(params: FilterParams): DeliveryFilter {
  const filter: DeliveryFilter = {};
  const source = sourceFilter(params.source);
  if (source !== undefined) filter.source = source;
  if (params.eventType !== undefined) filter.eventType = eventTypeMatch(unheld('eventType', params.eventType));
  if (params.verification !== undefined) {
    const status = VERIFICATIONS.find((value) => value === params.verification);
    if (status === undefined) throw invalid('verification', `expected ${VERIFICATIONS.join(', ')}`);
    filter.verification = status;
  }
  if (params.since !== undefined) filter.since = time('since', params.since);
  if (params.until !== undefined) filter.until = time('until', params.until);
  if (params.q !== undefined) {
    const length = [...params.q].length;
    if (length < MIN_SEARCH_CHARS || length > MAX_SEARCH_CHARS) {
      throw invalid(
        'q',
        `the text to search for takes ${MIN_SEARCH_CHARS} to ${MAX_SEARCH_CHARS} characters, this has ${length}`,
      );
    }
    filter.text = unheld('q', params.q);
  }
  return filter;
}

/** `invoice.paid` exactly, or `invoice.*`: every type that begins with `invoice.` (`*` alone: every delivery that has a type). */
function eventTypeMatch(text: string): NonNullable<DeliveryFilter['eventType']> {
  if (text === '' || text.length > MAX_EVENT_TYPE_LENGTH + 1) {
    throw invalid('eventType', `expected an event type of 1 to ${MAX_EVENT_TYPE_LENGTH} characters, or a prefix ending in *`);
  }
  return text.endsWith('*') ? { prefix: text.slice(0, -1) } : { exact: text };
}

function time(name: string, text: string): number {
  const value = parseRfc3339(text);
  if (value === undefined)
    throw invalid(name, 'expected an RFC 3339 time such as 2026-11-22T01:02:03Z (or with an offset, +02:00)');
  return value;
}

/**
 * A text filter as given, refused when it holds NUL (U+0000) or a lone
 * surrogate: no stored text holds them (PostgreSQL's text cannot; see
 * text-values.ts), so both stores answer such a filter alike, and at once.
 */
function unheld(name: string, text: string): string {
  if (!holdable(text)) {
    throw invalid(name, 'it holds NUL (U+0000) or a lone surrogate, which no stored text holds, so it could match nothing');
  }
  return text;
}

function invalid(name: string, reason: string): ProblemError {
  return new ProblemError('invalid_query', `The query parameter "${name}" is not valid: ${reason}.`);
}
