import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { problemCatalogue, type ProblemCode } from '../../platform/errors/problem-catalogue.js';
import type { Logger } from '../../platform/observe/logger.js';
import type { RefusalKeeper } from '../../refusals/refusal-keeper.js';
import { keepFrontDoorRefusal } from './kept-refusals.js';
import { WEBHOOK_PREFIX } from './webhook-handler.js';
import { writeProblem } from './write-problem.js';

/**
 * Requests that HTTP itself rules out, which Node would otherwise answer
 * with a bare status or not at all: each gets a problem, one log line
 * (`request refused before routing`, as the parser's refusals in
 * parser-refusals.ts) and the close of its connection.
 */

/**
 * `CONNECT` never reaches a route: Node hands it to the server's `connect`
 * event, and without a listener closes the connection with no answer. It is
 * answered `405 method_not_allowed`, with `Allow` (`POST` on the webhook
 * route). Reception is no proxy. One to the webhook route is kept as a refusal.
 */
export function createConnectHandler(logger: Logger, keeper?: RefusalKeeper): (req: IncomingMessage, socket: Duplex) => void {
  return (req, socket) => {
    const webhook = (req.url ?? '').startsWith(WEBHOOK_PREFIX);
    socket.on('error', () => undefined);
    const detail = webhook ? 'Use POST to send a webhook, not CONNECT.' : 'CONNECT is not served here: Reception is no proxy.';
    writeProblem(socket, 'method_not_allowed', detail, { Allow: webhook ? 'POST' : 'GET, HEAD, POST, DELETE' });
    keepFrontDoorRefusal(keeper, req, 'method_not_allowed', detail, false);
    socket.end();
    logger.info(
      { req: { method: 'CONNECT', remoteAddress: req.socket.remoteAddress }, status: 405, outcome: 'method_not_allowed' },
      'request refused before routing',
    );
  };
}

/**
 * Answers a request that HTTP rules out before any route looks at it, and
 * logs it; one to the webhook route answered with a 4xx is kept as a
 * refusal (a 501 is not one, CONTRACT 9).
 */
export function refuseBeforeRouting(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  code: ProblemCode,
  detail: string,
  keeper?: RefusalKeeper,
): void {
  writeProblem(res, code, detail);
  if (problemCatalogue[code].status < 500) keepFrontDoorRefusal(keeper, req, code, detail, true);
  req.resume();
  logger.info(
    {
      req: { method: req.method, remoteAddress: req.socket.remoteAddress },
      status: problemCatalogue[code].status,
      outcome: code,
    },
    'request refused before routing',
  );
}

/**
 * RFC 9112 6.1: a transfer coding the server does not understand is
 * answered 501. Node's parser takes `gzip, chunked` and undoes only the
 * chunks, so the body would reach a route still compressed; it refuses a
 * list whose last coding is not `chunked` itself (400).
 */
export function hasUnknownTransferCoding(req: IncomingMessage): boolean {
  const codings = req.headers['transfer-encoding'];
  return codings !== undefined && codings.trim().toLowerCase() !== 'chunked';
}

/**
 * RFC 9112 3.2: a server answers 400 to an HTTP/1.1 request without a Host
 * header, and to any request with more than one (Node keeps the first and
 * drops the others without a word). Undefined when the Host is right.
 */
export function hostProblem(req: IncomingMessage): string | undefined {
  if (req.headers.host === undefined) {
    return req.httpVersionMajor === 1 && req.httpVersionMinor >= 1 ? 'An HTTP/1.1 request needs a Host header.' : undefined;
  }
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
  }
  return hosts > 1 ? 'A request carries one Host header, not several.' : undefined;
}
