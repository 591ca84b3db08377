import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { problemFor, type ProblemCode } from '../errors.js';
import type { Logger } from '../observe/logger.js';

const answered = new WeakSet<Socket>();

/** Marks a connection whose current request was answered before its body ended (see discardRest). */
export function markAnswered(socket: Socket): void {
  answered.add(socket);
}

/** The connection has moved on to a complete request again. */
export function unmarkAnswered(socket: Socket): void {
  answered.delete(socket);
}

const timedOut = new WeakSet<Socket>();

/** True when the connection's request was cut by the request timeout and answered 408 here. */
export function wasTimedOut(socket: Socket): boolean {
  return timedOut.has(socket);
}

/** The start of a request line for the webhook route, whatever the method. */
const WEBHOOK_REQUEST_LINE = /^[!#$%&'*+.^`|~\w-]+ \/api\/webhook\//;

/** What Node's parser refused, as the problem the sender gets. */
function refusal(error: Error & { code?: string; rawPacket?: unknown }): { code: ProblemCode; detail: string } {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { code: 'request_timeout', detail: 'The request did not arrive in time.' };
  // Node refuses a path with raw non-ASCII bytes (curl sends `ü` as is): on
  // the webhook route that is a source name that was not percent-encoded.
  if (error.code === 'HPE_INVALID_URL' && error.rawPacket instanceof Buffer
    && WEBHOOK_REQUEST_LINE.test(error.rawPacket.toString('latin1', 0, 64))) {
    return { code: 'invalid_source', detail: 'Percent-encode the source name as UTF-8 (ü is %C3%BC).' };
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return { code: 'headers_too_large', detail: 'The request headers are larger than this server accepts.' };
  }
  return { code: 'bad_request', detail: 'The request is not valid HTTP/1.1 (a malformed request line, header or chunk).' };
}

/**
 * Answers what Node's HTTP parser refuses before any route runs (Fastify's
 * `clientErrorHandler`): a request whose headers and body did not arrive in
 * time gets `408 request_timeout` (CONTRACT 1, slow senders), headers that
 * are too large `431 headers_too_large`, a webhook path with raw non-ASCII
 * bytes `400 invalid_source`, anything else that is not valid HTTP
 * `400 bad_request`, each as a problem. The connection is always
 * closed. A refusal before any request began is logged here, one line; a
 * request already handed to a route (a body that stopped arriving) is
 * logged by that route, which asks `wasTimedOut`.
 */
export function createClientErrorHandler(logger: Logger): (error: Error & { code?: string; rawPacket?: unknown }, socket: Socket) => void {
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    if (answered.has(socket)) {
      // This request was answered already; its sender stopped halfway through the rest of the body.
      socket.destroy();
      return;
    }
    const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    const { code, detail } = refusal(error);
    const problem = problemFor(code, detail);
    let status: number | undefined;
    if (socket.writable && response?.headersSent !== true) {
      const body = JSON.stringify(problem);
      socket.write(`HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`
        + `Content-Type: application/problem+json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`);
      status = problem.status;
      if (code === 'request_timeout') timedOut.add(socket);
    }
    if (response === undefined) {
      // Only Node's error code goes to the log: the bytes it refused are the
      // sender's. Info, as every refused request: a browser's preconnect that
      // never sends a request ends here too, after the request timeout.
      logger.info({ req: { remoteAddress: socket.remoteAddress }, status, outcome: code, parserError: error.code }, 'request refused before routing');
    }
    socket.destroy(error);
  };
}
