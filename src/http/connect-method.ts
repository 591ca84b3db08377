import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { problemFor } from '../errors.js';
import type { Logger } from '../observe/logger.js';

/**
 * `CONNECT` never reaches a route: Node hands it to the server's `connect`
 * event, and without a listener closes the connection with no answer. It is
 * answered here as any method that a path does not take: `405
 * method_not_allowed` as a problem, with `Allow` (`POST` on the webhook
 * route), one log line, and the connection closed. Reception is no proxy.
 */
export function createConnectHandler(logger: Logger): (req: IncomingMessage, socket: Duplex) => void {
  return (req, socket) => {
    const webhook = (req.url ?? '').startsWith('/api/webhook/');
    const problem = problemFor('method_not_allowed', webhook ? 'Use POST to send a webhook, not CONNECT.' : 'CONNECT is not served here: Reception is no proxy.');
    const body = JSON.stringify(problem);
    socket.on('error', () => undefined);
    socket.end(`HTTP/1.1 405 Method Not Allowed\r\nAllow: ${webhook ? 'POST' : 'GET, HEAD, POST, DELETE'}\r\n`
      + `Content-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    logger.info({ req: { method: 'CONNECT', remoteAddress: req.socket.remoteAddress }, status: 405, outcome: 'method_not_allowed' }, 'request refused before routing');
  };
}
