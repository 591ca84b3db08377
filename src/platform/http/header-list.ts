export type HeaderList = Array<[string, string]>;

export const DEFAULT_REDACTED_HEADERS: readonly string[] = ['authorization', 'cookie', 'proxy-authorization'];
export const REDACTED = '[redacted]';

/**
 * Turns Node's `rawHeaders` (name, value, name, value, ...) into the ordered
 * `[name, value]` list that a delivery keeps, names as the sender wrote them,
 * with the values of the redacted headers replaced.
 */
export function headerList(rawHeaders: readonly string[], redacted: ReadonlySet<string>): HeaderList {
  const list: HeaderList = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    const value = rawHeaders[i + 1] as string;
    list.push([name, redacted.has(name.toLowerCase()) ? REDACTED : value]);
  }
  return list;
}
