// What the page shows lives in the address's hash (`#source=github&q=…&id=…`),
// so that reloading keeps it, a search can be shared as a link, and Back
// closes a delivery on a phone.

/** The list's filters (CONTRACT 8), as the API takes them. */
export interface Filters {
  source?: string;
  /** Exact, or a prefix ending in `*`. */
  eventType?: string;
  verification?: 'verified' | 'failed' | 'none';
  /** RFC 3339 times. */
  since?: string;
  until?: string;
  /** Text in the raw body or a header value. */
  q?: string;
}

export interface Route extends Filters {
  id?: string;
}

/** The filters in the order they are shown and written. */
export const FILTER_NAMES = ['source', 'eventType', 'verification', 'since', 'until', 'q'] as const;
export type FilterName = (typeof FILTER_NAMES)[number];

const VERIFICATIONS = new Set(['verified', 'failed', 'none']);

export function readRoute(): Route {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const route: Route = {};
  for (const name of FILTER_NAMES) {
    const value = params.get(name);
    if (value === null || value === '') continue;
    if (name === 'verification') {
      if (VERIFICATIONS.has(value)) route.verification = value as Route['verification'];
    } else route[name] = value;
  }
  const id = params.get('id');
  if (id !== null && id !== '') route.id = id;
  return route;
}

/** Only the filters of a route (without the open delivery). */
export function filtersOf(route: Route): Filters {
  const filters: Filters = {};
  for (const name of FILTER_NAMES) if (route[name] !== undefined) Object.assign(filters, { [name]: route[name] });
  return filters;
}

export function sameFilters(a: Filters, b: Filters): boolean {
  return FILTER_NAMES.every((name) => a[name] === b[name]);
}

export function routeHref(route: Route): string {
  const params = new URLSearchParams();
  for (const name of FILTER_NAMES) {
    const value = route[name];
    if (value !== undefined) params.set(name, value);
  }
  if (route.id !== undefined) params.set('id', route.id);
  const text = params.toString();
  return text === '' ? '#' : `#${text}`;
}

/** Moves to `route`; `replace` keeps the history entry (for corrections, not navigation). */
export function go(route: Route, replace = false): void {
  const href = routeHref(route);
  if (href === (location.hash === '' ? '#' : location.hash)) return;
  if (!replace) {
    location.hash = href;
    return;
  }
  history.replaceState(null, '', href);
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}
