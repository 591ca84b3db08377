import type { IncomingHttpHeaders } from 'node:http';
import type { ForwardRoute } from './destination-config-schema.js';
import { compileFilter, type Filter, type FilterSubject } from './route-filter.js';

/** A source's route to one destination, its filter compiled. */
export interface Route {
  to: string;
  filter?: Filter;
  /** The transform that reshapes what this route sends (CONTRACT 10). */
  transform?: string;
}

export function compileRoutes(routes: readonly ForwardRoute[] | undefined): Route[] {
  return (routes ?? []).map((route) => ({
    to: route.to,
    ...(route.filter === undefined ? {} : { filter: compileFilter(route.filter) }),
    ...(route.transform === undefined ? {} : { transform: route.transform }),
  }));
}

/** Where a delivery goes: a destination, and the transform of the route that chose it (null: none). */
export interface ChosenRoute {
  destination: string;
  transform: string | null;
}

/**
 * The destinations a delivery goes to: each route whose filter matches, once
 * per destination. `subject` is built only when some route has a filter
 * (it parses the body). The first matching route to a destination gives its transform.
 */
export function destinationsFor(routes: readonly Route[], subject: () => FilterSubject): ChosenRoute[] {
  const chosen: ChosenRoute[] = [];
  let built: FilterSubject | undefined;
  for (const route of routes) {
    if (chosen.some((c) => c.destination === route.to)) continue;
    if (route.filter !== undefined) {
      built ??= subject();
      if (!route.filter(built)) continue;
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
