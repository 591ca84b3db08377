/**
 * The origin form (`/path?query`) of a request target. RFC 9112 (3.2.2)
 * has servers accept the absolute form too (`http://host/path?query`),
 * which some clients send; Node hands it over as it came, and the routes
 * match on paths.
 */
export function originForm(target: string): string {
  if (target.charCodeAt(0) === 0x2f /* '/' */ || !/^https?:\/\//i.test(target)) return target;
  const authority = target.indexOf('//') + 2;
  const path = target.indexOf('/', authority);
  const query = target.indexOf('?', authority);
  if (path === -1 || (query !== -1 && query < path)) return query === -1 ? '/' : `/${target.slice(query)}`;
  return target.slice(path);
}
