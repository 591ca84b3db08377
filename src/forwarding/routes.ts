import type { IncomingHttpHeaders } from 'node:http';
import type { ForwardRoute } from './destination-config-schema.js';
import {
  compileFilter,
  fieldsRead,
  SUBJECT_BODY,
  SUBJECT_EVENT_TYPE,
  SUBJECT_HEADERS,
  SUBJECT_QUERY,
  type Filter,
  type FilterSubject,
} from './route-filter.js';

/** A source's route to one destination, its filter compiled. */
export interface Route {
  to: string;
  filter?: Filter;
  /** The subject's fields the filter reads (route-filter.ts `fieldsRead`); 0 without a filter. */
  reads: number;
  /** The transform that reshapes what this route sends (CONTRACT 10). */
  transform?: string;
}

export function compileRoutes(routes: readonly ForwardRoute[] | undefined): Route[] {
  return (routes ?? []).map((route) => ({
    to: route.to,
    ...(route.filter === undefined ? {} : { filter: compileFilter(route.filter) }),
    reads: route.filter === undefined ? 0 : fieldsRead(route.filter),
    ...(route.transform === undefined ? {} : { transform: route.transform }),
  }));
}

/** Where a delivery goes: a destination, and the transform of the route that chose it (null: none). */
export interface ChosenRoute {
  destination: string;
  transform: string | null;
}

/** How a delivery's filter subject is made, one field at a time. */
export interface SubjectParts {
  body: () => unknown;
  headers: () => Record<string, string | string[]>;
  query: () => Record<string, string | string[]>;
  eventType: string | null;
}

/** What a field no filter reads holds in the subject (never read: `fieldsRead` says so). */
const UNREAD: Record<string, string | string[]> = Object.freeze(Object.create(null) as Record<string, string | string[]>);

/**
 * The destinations a delivery goes to: each route whose filter matches, once
 * per destination. The subject is built only when some route has a filter,
 * and with the fields the filters read only: parsing the body, copying the
 * headers and parsing the query are each done only for a filter that reads
 * them. The first matching route to a destination gives its transform.
 */
export function destinationsFor(routes: readonly Route[], parts: SubjectParts): ChosenRoute[] {
  const chosen: ChosenRoute[] = [];
  let subject: FilterSubject | undefined;
  let built = 0;
  for (const route of routes) {
    if (chosen.some((c) => c.destination === route.to)) continue;
    if (route.filter !== undefined) {
      subject ??= { body: undefined, headers: UNREAD, query: UNREAD, eventType: null };
      const missing = route.reads & ~built;
      if (missing !== 0) {
        if ((missing & SUBJECT_BODY) !== 0) subject.body = parts.body();
        if ((missing & SUBJECT_HEADERS) !== 0) subject.headers = parts.headers();
        if ((missing & SUBJECT_QUERY) !== 0) subject.query = parts.query();
        if ((missing & SUBJECT_EVENT_TYPE) !== 0) subject.eventType = parts.eventType;
        built |= missing;
      }
      if (!route.filter(subject)) continue;
    }
    chosen.push({ destination: route.to, transform: route.transform ?? null });
  }
  return chosen;
}

/** The headers as a filter sees them: names in lower case, without the redacted ones. */
export function filterHeaders(headers: IncomingHttpHeaders, redacted: ReadonlySet<string>): Record<string, string | string[]> {
  const seen: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || redacted.has(name)) continue;
    seen[name] = value;
  }
  return seen;
}

/** The query string parsed; a key given several times is an array of its values. */
export function filterQuery(query: string): Record<string, string | string[]> {
  const parsed: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [key, value] of new URLSearchParams(query)) {
    const before = parsed[key];
    parsed[key] = before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value];
  }
  return parsed;
}
