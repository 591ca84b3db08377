import type { IncomingHttpHeaders } from 'node:http';
import type { ForwardRoute } from './destination-config-schema.js';
import { compileFilter, type Filter, type FilterSubject } from './route-filter.js';

/** A source's route to one destination, its filter compiled. */
export interface Route {
  to: string;
  filter?: Filter;
}

export function compileRoutes(routes: readonly ForwardRoute[] | undefined): Route[] {
  return (routes ?? []).map((route) =>
    route.filter === undefined ? { to: route.to } : { to: route.to, filter: compileFilter(route.filter) },
  );
}

/**
 * The destinations a delivery goes to: each route whose filter matches, once
 * per destination. `subject` is built only when some route has a filter
 * (it parses the body).
 */
export function destinationsFor(routes: readonly Route[], subject: () => FilterSubject): string[] {
  const chosen: string[] = [];
  let built: FilterSubject | undefined;
  for (const route of routes) {
    if (chosen.includes(route.to)) continue;
    if (route.filter !== undefined) {
      built ??= subject();
      if (!route.filter(built)) continue;
    }
    chosen.push(route.to);
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
