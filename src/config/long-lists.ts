/**
 * A validated config file handed from the reading thread to the event loop
 * (config-reader.ts) in parts: one structured-clone message of a file with
 * a 200,000-value list took the event loop 0.2 to 0.8 s to take in on a busy
 * machine. Its long lists are taken out and sent a few thousand values per
 * message, taken in one message per turn of the event loop, then put back.
 */

/** Values per message, and the length from which a list is sent apart. */
export const VALUES_PER_PART = 5000;

/** Where a list was taken out: the keys (object keys, array indexes) from the top. */
export type ListPath = Array<string | number>;

/** Takes every list longer than VALUES_PER_PART out of `data` (left `null` in its place), and says where each was. */
export function detachLongLists(data: unknown): { paths: ListPath[]; lists: unknown[][] } {
  const paths: ListPath[] = [];
  const lists: unknown[][] = [];
  const walk = (node: unknown, path: ListPath): void => {
    if (typeof node !== 'object' || node === null) return;
    const entries: Array<[string | number, unknown]> = Array.isArray(node)
      ? (node as unknown[]).map((value, index) => [index, value])
      : Object.entries(node);
    for (const [key, value] of entries) {
      if (Array.isArray(value) && value.length > VALUES_PER_PART) {
        paths.push([...path, key]);
        lists.push(value as unknown[]);
        setAt(node, key, null);
      } else {
        walk(value, [...path, key]);
      }
    }
  };
  walk(data, []);
  return { paths, lists };
}

/** Puts the lists back where `detachLongLists` took them from. */
export function attachLongLists(data: unknown, paths: readonly ListPath[], lists: readonly unknown[][]): void {
  paths.forEach((path, index) => {
    let node: unknown = data;
    for (const key of path.slice(0, -1)) node = (node as Record<string | number, unknown>)[key];
    const last = path[path.length - 1];
    if (typeof node !== 'object' || node === null || last === undefined) throw new Error('a list has no place to go back to');
    setAt(node, last, lists[index] ?? []);
  });
}

/** An own property, even one named `__proto__` (plain assignment would set the prototype). */
function setAt(node: object, key: string | number, value: unknown): void {
  Object.defineProperty(node, key, { value, writable: true, enumerable: true, configurable: true });
}
