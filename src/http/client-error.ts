import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { problemFor } from '../errors.js';

const answered = new WeakSet<Socket>();

/** Marks a connection whose current request was answered before its body ended (see discardRest). */
export function markAnswered(socket: Socket): void {
  answered.add(socket);
}

/** The connection has moved on to a complete request again. */
export function unmarkAnswered(socket: Socket): void {
  answered.delete(socket);
}

/**
 * Answers what Node's HTTP parser refuses before any route runs (Fastify's
 * `clientErrorHandler`). A request whose headers and body did not arrive in
 * time gets the `request_timeout` problem (CONTRACT 1, slow senders); other
 * parse failures are answered as Fastify does by default. The connection is
 * always closed.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (answered.has(socket)) {
    // This request was answered already; its sender stopped halfway through the rest of the body.
    socket.destroy();
    return;
  }
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && response?.headersSent !== true) {
    let status: number;
    let type = 'application/json';
    let body: string;
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      status = 408;
      type = 'application/problem+json; charset=utf-8';
      body = JSON.stringify(problemFor('request_timeout', 'The request did not arrive in time.'));
    } else if (error.code === 'HPE_HEADER_OVERFLOW') {
      status = 431;
      body = '{"error":"Request Header Fields Too Large","message":"Exceeded maximum allowed HTTP header size","statusCode":431}';
    } else {
      status = 400;
      body = '{"error":"Bad Request","message":"Client Error","statusCode":400}';
    }
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`
      + `Content-Type: ${type}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(error);
}
