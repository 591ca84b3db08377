import type { Socket } from 'node:net';
import { problemCatalogue, type ProblemCode } from '../../platform/errors/problem-catalogue.js';
import type { Logger } from '../../platform/observe/logger.js';
import type { RefusalKeeper } from '../../refusals/refusal-keeper.js';
import type { Connections } from './connection-state.js';
import { keepParserRefusal } from './kept-refusals.js';
import { writeProblem } from './write-problem.js';

/** What Node's parser hands the server's `clientError` listener. */
export type ParserError = Error & { code?: string; rawPacket?: unknown };

/** The start of a request line for the webhook route, whatever the method. */
const WEBHOOK_REQUEST_LINE = /^[!#$%&'*+.^`|~\w-]+ \/api\/webhook\//;

/** True when the refused request line is the webhook route's and the byte Node refused is in its path, not its query. */
function badByteInWebhookPath(packet: Buffer): boolean {
  const line = packet.toString('latin1', 0, Math.min(packet.length, 16 * 1024));
  if (!WEBHOOK_REQUEST_LINE.test(line)) return false;
  const start = line.indexOf(' ') + 1;
  const end = line.indexOf(' ', start);
  const target = line.slice(start, end === -1 ? line.indexOf('\r', start) : end);
  const query = target.indexOf('?');
  return /[^\x21-\x7e]/.test(query === -1 ? target : target.slice(0, query));
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;

/** Advice for a source name Node refused: percent-encoding helps non-ASCII, not a control character. */
function badByteDetail(packet: Buffer): string {
  const line = packet.toString('latin1', 0, Math.min(packet.length, 16 * 1024));
  const path = line.slice(line.indexOf(' ') + 1).split(/[ ?\r]/, 1)[0] ?? '';
  return CONTROL.test(path)
    ? 'A source name cannot hold control characters (such as a tab), raw or percent-encoded.'
    : 'Percent-encode the source name as UTF-8 (ü is %C3%BC).';
}

/** What Node's parser refused, as the problem the sender gets. */
function refusal(error: ParserError): { code: ProblemCode; detail: string } {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { code: 'request_timeout', detail: 'The request did not arrive in time.' };
  // Node refuses a path with raw non-ASCII bytes (curl sends `ü` as is): on
  // the webhook route that is a source name that was not percent-encoded.
  if (error.code === 'HPE_INVALID_URL' && error.rawPacket instanceof Buffer && badByteInWebhookPath(error.rawPacket)) {
    return { code: 'invalid_source', detail: badByteDetail(error.rawPacket) };
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return { code: 'headers_too_large', detail: 'The request headers are larger than this server accepts.' };
  }
  return { code: 'bad_request', detail: 'The request is not valid HTTP/1.1 (a malformed request line, header or chunk).' };
}

/**
 * Answers what Node's HTTP parser refuses before any route runs (the
 * server's `clientError`, which Fastify's `clientErrorHandler` option
 * installs): a request whose headers and body did not arrive in
 * time gets `408 request_timeout` (CONTRACT 1, slow senders), headers that
 * are too large `431 headers_too_large`, a webhook path with raw non-ASCII
 * bytes `400 invalid_source`, anything else that is not valid HTTP
 * `400 bad_request`, each as a problem. The connection is always
 * closed. A refusal before any request began is logged here, one line, and
 * kept as a refusal when its bytes begin a request for the webhook route
 * (kept-refusals.ts); a request already handed to a route (a body that
 * stopped arriving) is logged and kept by that route, which reads what it
 * was answered from the connection's `refusal`.
 */
export function createParserRefusalHandler(
  logger: Logger,
  connections: Connections,
  keeper?: RefusalKeeper,
): (error: ParserError, socket: Socket) => void {
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const connection = connections.of(socket);
    if (connection.answeredEarly) {
      // This request was answered already; its sender stopped halfway through the rest of the body.
      socket.destroy();
      return;
    }
    // None between requests on a keep-alive connection: the refused bytes then begin a request.
    const response = connection.answerInFlight();
    const { code, detail } = refusal(error);
    // `afterAnswer`: the answer to the request before has been written whole, so this one may follow it.
    const refuse = (afterAnswer: boolean): void => {
      let status: number | undefined;
      if (socket.writable && (afterAnswer || response?.headersSent !== true)) {
        writeProblem(socket, code, detail);
        status = problemCatalogue[code].status;
        connection.refusal = code;
        connection.refusalDetail = detail;
      }
      if (response === undefined || response.writableFinished) {
        if (status !== undefined) keepParserRefusal(keeper, error.rawPacket, code, detail);
        // Only Node's error code goes to the log: the bytes it refused are the
        // sender's. Info, as every refused request: a browser's preconnect that
        // never sends a request ends here too, after the request timeout.
        logger.info(
          { req: { remoteAddress: socket.remoteAddress }, status, outcome: code, parserError: error.code },
          'request refused before routing',
        );
      }
      socket.destroy(error);
    };
    if (response !== undefined && response.req.complete && !response.writableFinished) {
      // The request in flight arrived whole (its delivery may be committing):
      // the bytes refused are the next request's. The answer in flight goes
      // first, as HTTP/1.1 orders answers, then this refusal and the close.
      if (connection.refusalWaits) return;
      connection.refusalWaits = true;
      socket.pause();
      response.once('finish', () => refuse(true));
      response.once('close', () => {
        if (!response.writableFinished) socket.destroy();
      });
      return;
    }
    if (error.code === 'HPE_INVALID_EOF_STATE' && response !== undefined) {
      // The sender closed its side halfway through the body: it left, and no
      // answer can reach it. The route logs the request, 499 aborted.
      socket.destroy();
      return;
    }
    refuse(false);
  };
}
