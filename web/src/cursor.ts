// List cursors as the server makes them, and the order it lists source names in.

/**
 * The list cursor for the deliveries older than `seq`. A cursor is opaque
 * to API clients; this page is served by the same server and built with it,
 * so it may make one (src/platform/http/cursor.ts): base64url of `s<seq>`.
 */
export function cursorBefore(seq: number): string {
  return btoa(`s${seq}`).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * The sources cursor for the names after `name` (src/platform/http/cursor.ts):
 * base64url of the UTF-8 of `n<name>`. The sources panel makes one when it
 * lets go of its last rows, to page on from the last one it keeps.
 */
export function cursorAfterName(name: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(`n${name}`)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Code point order, as the server lists names (JavaScript's `<` compares UTF-16 units, which puts U+10000 and up before U+E000). */
export function compareNames(a: string, b: string): number {
  const left = a[Symbol.iterator]();
  const right = b[Symbol.iterator]();
  for (;;) {
    const x = left.next();
    const y = right.next();
    if (x.done === true || y.done === true) return (x.done === true ? 0 : 1) - (y.done === true ? 0 : 1);
    const difference = (x.value.codePointAt(0) ?? 0) - (y.value.codePointAt(0) ?? 0);
    if (difference !== 0) return difference;
  }
}
