// What the page shows lives in the address's hash (`#source=github&id=…`), so
// that reloading keeps it, links can be shared, and Back closes a delivery on
// a phone.

export interface Route {
  source?: string;
  id?: string;
}

export function readRoute(): Route {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const route: Route = {};
  const source = params.get('source');
  const id = params.get('id');
  if (source !== null && source !== '') route.source = source;
  if (id !== null && id !== '') route.id = id;
  return route;
}

export function routeHref(route: Route): string {
  const params = new URLSearchParams();
  if (route.source !== undefined) params.set('source', route.source);
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
