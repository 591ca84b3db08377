import type { IncomingMessage, ServerResponse } from 'node:http';
import { problemCatalogue } from '../../errors.js';
import type { Logger } from '../../observe/logger.js';
import { markAnswered, refusalOf, unmarkAnswered } from './parser-refusals.js';
import type { Metrics } from '../../observe/metrics.js';
import type { BodyBudget } from '../../receive/body-budget.js';
import { readBody } from '../../receive/read-body.js';
import { hasRequestBehind, markClosing, mayReadRequest } from './pipelined-requests.js';
import type { Answer, Receiver } from '../../receive/receiver.js';

export const WEBHOOK_PREFIX = '/api/webhook/';

/** True for `/api/webhook/{one segment}` (with or without a query). */
export function isWebhookUrl(url: string): boolean {
  if (!url.startsWith(WEBHOOK_PREFIX)) return false;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path.indexOf('/', WEBHOOK_PREFIX.length) === -1;
}

export interface WebhookHandlerDeps {
  receiver: Receiver;
  logger: Logger;
  metrics: Metrics;
  /** Bounds the bytes of all bodies arriving at once. */
  incoming: BodyBudget;
  /** True once shutdown began: answers then close their connection. */
  isClosing: () => boolean;
}

/**
 * The receive route as a plain `node:http` handler, in front of Fastify:
 * the hot path pays for no framework. It only moves bytes between Node and
 * the framework-free `Receiver`.
 */
export function createWebhookHandler(deps: WebhookHandlerDeps): (req: IncomingMessage, res: ServerResponse, expectsContinue?: boolean) => void {
  const { receiver, logger, metrics } = deps;
  // expectsContinue: the sender waits for `100 Continue` before it sends the
  // body (`Expect: 100-continue`). It is sent only when the body is about to
  // be read, so that a refusal (413 by Content-Length, 415, 405...) comes
  // instead and the body is never sent.
  const handle = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): void => {
    const started = process.hrtime.bigint();
    const url = req.url ?? '';
    const queryAt = url.indexOf('?');
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    receiver
      .handle({
        method: req.method ?? 'GET',
        sourceSegment: path.slice(WEBHOOK_PREFIX.length),
        query: queryAt === -1 ? '' : url.slice(queryAt + 1),
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        socketAddress: req.socket.remoteAddress,
        readBody: (limit) => {
          if (expectsContinue) res.writeContinue();
          return readBody(req, limit, deps.incoming);
        },
      })
      .then((answer) => {
        if (!answer.aborted && !res.headersSent && !res.destroyed) {
          // While shutting down, the last answer on a connection closes it; one with a request behind it does not.
          const closing = deps.isClosing() && !hasRequestBehind(req.socket, res);
          if (closing) markClosing(res);
          send(res, answer, closing);
          if (answer.closeConnection) discardRest(req);
        }
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        // Aborted: answered by Node's parser handler (parser-refusals.ts: 408 at the request
        // timeout, 400 for a body that broke HTTP), or the sender left (499, nginx's word for it).
        const refusedAs = answer.aborted === true ? refusalOf(req.socket) : undefined;
        const status = answer.aborted ? (refusedAs === undefined ? 499 : problemCatalogue[refusedAs].status) : answer.status;
        const outcome = answer.aborted ? (refusedAs ?? 'aborted') : answer.outcome;
        metrics.countDelivery(answer.source ?? '_invalid', outcome);
        if (answer.verification?.status === 'failed') {
          metrics.verificationFailures.inc({ source: metrics.sourceLabel(answer.source ?? '_invalid'), reason: answer.verification.reason ?? 'unknown' });
        }
        metrics.observeRequest('/api/webhook/:source', req.method ?? '', status, seconds);
        const line = {
          req: { method: req.method, path, remoteAddress: req.socket.remoteAddress },
          status,
          ms: Math.round(seconds * 1e6) / 1e3,
          source: answer.source,
          outcome,
          id: answer.id,
          verification: answer.verification,
        };
        if (answer.error !== undefined) logger.error({ ...line, err: answer.error }, 'webhook failed');
        else logger.info(line, 'webhook');
      })
      .catch((error: unknown) => {
        logger.error({ err: error, req: { method: req.method, path } }, 'webhook handler crashed');
        if (!res.headersSent) res.writeHead(500).end();
      });
  };
  return (req, res, expectsContinue = false) => {
    const mayRead = mayReadRequest(req.socket, res, expectsContinue);
    if (mayRead === true) {
      handle(req, res, expectsContinue);
      return;
    }
    void Promise.resolve(mayRead).then((open) => {
      if (open) {
        handle(req, res, expectsContinue);
        return;
      }
      // Its answer could never be written: nothing is read or kept, and the sender, seeing the connection close, sends it again.
      logger.info({ req: { method: req.method, path: (req.url ?? '').split('?')[0], remoteAddress: req.socket.remoteAddress }, outcome: 'not_read' },
        'webhook not read: the answer before it on its connection closed the connection');
    });
  };
}

function send(res: ServerResponse, answer: Answer, closing: boolean): void {
  const headers: Record<string, string | number> = {
    ...answer.headers,
    'content-length': Buffer.byteLength(answer.body),
  };
  if (closing) headers.connection = 'close';
  res.writeHead(answer.status, headers);
  res.end(answer.body);
}

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
 */
function discardRest(req: IncomingMessage): void {
  if (req.complete) return;
  const socket = req.socket;
  markAnswered(socket);
  let discarded = 0;
  const cut = (): void => {
    clearTimeout(timer);
    req.off('data', onData);
    // Half-close rather than close: a close with unread bytes in the socket
    // sends a reset, and a sender that had not yet read the answer would
    // lose it. The FIN follows the answer, nothing more is read (the sender
    // is held back by TCP's window), and the socket goes after a last wait.
    req.pause();
    socket.end();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
  const onData = (chunk: Buffer): void => {
    discarded += chunk.length;
    if (discarded > LINGER_BYTES) cut();
  };
  const timer = setTimeout(cut, LINGER_MS);
  timer.unref();
  req.on('data', onData);
  req.once('end', () => {
    clearTimeout(timer);
    req.off('data', onData);
    unmarkAnswered(socket);
  });
  req.once('close', () => clearTimeout(timer));
  req.resume();
}
