import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Requests pipelined on one connection (HTTP/1.1 lets a client send the next
 * request before the answer to the one before): Node parses them at once and
 * writes their answers in order, but once one answer closes the connection,
 * the answers queued behind it are never written. A delivery stored for such
 * a request would be kept without its sender ever hearing so, and sent again.
 *
 * Two answers close a connection: any answer while shutting down, which
 * therefore closes it only when no request is behind it (`hasRequestBehind`),
 * and a refusal of a request that asked `Expect: 100-continue` without being
 * sent `100 Continue` (Node closes those, the body not having been read). So
 * a request behind one that may close its connection waits until that answer
 * is out, and is not read at all when it closed the connection. Requests
 * behind any other answer are read at once and share commits as usual.
 */
const latest = new WeakMap<Socket, ServerResponse>();
/** Answers that may close their connection. */
const mayClose = new WeakSet<ServerResponse>();

/**
 * Registers `res` as its connection's latest answer, and tells whether its
 * request may be read: at once (true), or once the answer before it is out
 * (a promise of false when that answer closed the connection).
 */
export function mayReadRequest(socket: Socket, res: ServerResponse, expectsContinue: boolean): Promise<boolean> | boolean {
  const before = latest.get(socket);
  latest.set(socket, res);
  if (expectsContinue) mayClose.add(res);
  if (before === undefined || before.writableFinished || before.destroyed) return isOpen(socket);
  if (!mayClose.has(before)) return true;
  return new Promise((resolve) => {
    const done = (): void => {
      before.off('finish', done);
      before.off('close', done);
      // Node's own 'finish' listener, added first, has already ended the socket if that answer closes it.
      resolve(isOpen(socket));
    };
    before.once('finish', done);
    before.once('close', done);
  });
}

/** True when another request was pipelined behind `res` on its connection. */
export function hasRequestBehind(socket: Socket, res: ServerResponse): boolean {
  const last = latest.get(socket);
  return last !== undefined && last !== res;
}

/** `res` closes its connection: a request that arrives behind it waits for it (see above). */
export function markClosing(res: ServerResponse): void {
  mayClose.add(res);
}

function isOpen(socket: Socket): boolean {
  return !socket.destroyed && !socket.writableEnded;
}
