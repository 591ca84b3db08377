import type { IncomingMessage } from 'node:http';
import type { ConnectionState } from './connection-state.js';
import type { BodyStart } from './kept-refusals.js';

/** Bytes and time a refused request's unread body may still take before its connection is cut. */
const LINGER_BYTES = 8 * 1024 * 1024;
const LINGER_MS = 2000;

/**
 * A request refused before its body was read (413, 415, 405...): the answer
 * is out, and the rest of the body is read and thrown away, never kept, so
 * that a sender or a proxy still writing sees the answer rather than a reset
 * (nginx turns a reset into 502), and a short body leaves the connection
 * usable. A body that goes on for more than 8 MiB or 2 s is cut: the
 * server half-closes, reads no more, and closes 2 s later.
 *
 * `start`, when given, notes the body's start for the request's refusal
 * (kept-refusals.ts), and is told when no more of it will be read.
 */
export function discardRest(req: IncomingMessage, connection: ConnectionState, start?: BodyStart): void {
  if (req.complete) {
    if (start !== undefined) readWhatArrived(req, start);
    return;
  }
  const socket = req.socket;
  connection.answeredEarly = true;
  let discarded = 0;
  const cut = (): void => {
    clearTimeout(timer);
    req.off('data', onData);
    start?.end();
    // Half-close rather than close: a close with unread bytes in the socket
    // sends a reset, and a sender that had not yet read the answer would
    // lose it. The FIN follows the answer, nothing more is read (the sender
    // is held back by TCP's window), and the socket goes after a last wait.
    req.pause();
    socket.end();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
  const onData = (chunk: Buffer): void => {
    start?.take(chunk);
    discarded += chunk.length;
    if (discarded > LINGER_BYTES) cut();
  };
  const timer = setTimeout(cut, LINGER_MS);
  timer.unref();
  req.on('data', onData);
  req.once('end', () => {
    clearTimeout(timer);
    req.off('data', onData);
    start?.end();
    // The connection has moved on to a complete request again.
    connection.answeredEarly = false;
  });
  req.once('close', () => {
    clearTimeout(timer);
    start?.end();
  });
  req.resume();
}

/** A body that had arrived whole before its answer, unread: its start is noted as Node drains it. */
function readWhatArrived(req: IncomingMessage, start: BodyStart): void {
  if (req.readableEnded) {
    start.end();
    return;
  }
  req.on('data', start.take);
  req.once('end', start.end);
  req.once('close', start.end);
  req.resume();
}
