// List cursors as the server makes them.

/**
 * The list cursor for the deliveries older than `seq`. A cursor is opaque
 * to API clients; this page is served by the same server and built with it,
 * so it may make one (src/http/cursor.ts): base64url of `s<seq>`.
 */
export function cursorBefore(seq: number): string {
  return btoa(`s${seq}`).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
