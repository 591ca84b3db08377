import type { IncomingMessage, ServerResponse } from 'node:http';
import { problemCatalogue } from '../../platform/errors/problem-catalogue.js';
import type { Logger } from '../../platform/observe/logger.js';
import type { Metrics } from '../../platform/observe/metrics.js';
import { createWebhookLog, type WebhookLogFields } from '../webhook-log.js';
import type { BodyBudget } from '../../body/body-budget.js';
import { readBody } from '../../body/read-body.js';
import type { Answer, Receiver } from '../receiver.js';
import type { RefusalKeeper } from '../../refusals/refusal-keeper.js';
import type { ConnectionState } from './connection-state.js';
import { discardRest } from './discard-rest.js';
import { BodyStart } from './kept-refusals.js';

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
  /** Keeps the refusals (CONTRACT 9); none kept when absent. */
  refusals?: RefusalKeeper;
}

/** Handles one webhook request; `connection` is the state of the connection it came on. */
export type WebhookHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  connection: ConnectionState,
  expectsContinue: boolean,
) => void;

/**
 * The receive route as a plain `node:http` handler, in front of Fastify:
 * the hot path pays for no framework. It only moves bytes between Node and
 * the framework-free `Receiver`.
 */
export function createWebhookHandler(deps: WebhookHandlerDeps): WebhookHandler {
  const { receiver, logger, metrics } = deps;
  const logWebhook = createWebhookLog(logger);
  // expectsContinue: the sender waits for `100 Continue` before it sends the
  // body (`Expect: 100-continue`). It is sent only when the body is about to
  // be read, so that a refusal (413 by Content-Length, 415, 405...) comes
  // instead and the body is never sent.
  const handle: WebhookHandler = (req, res, connection, expectsContinue) => {
    const started = process.hrtime.bigint();
    const url = req.url ?? '';
    const queryAt = url.indexOf('?');
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    /** The body's size once read, for the log line. */
    let size: number | undefined;
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
          return readBody(req, limit, deps.incoming).then((body) => {
            size = body.length;
            return body;
          });
        },
      })
      .then((answer) => {
        const sent = !answer.aborted && !res.headersSent && !res.destroyed;
        let bodyStart: BodyStart | undefined;
        if (sent) {
          // While shutting down, the last answer on a connection closes it; one with a request behind it does not.
          const closing = deps.isClosing() && !connection.hasRequestBehind(res);
          if (closing) connection.markClosing(res);
          send(res, answer, closing);
          if (answer.closeConnection) {
            if (answer.refused?.bodyUnread === true && deps.refusals?.hasRoom() === true) bodyStart = new BodyStart();
            discardRest(req, connection, bodyStart);
          }
        }
        keepRefusal(deps.refusals, answer, sent, connection, bodyStart);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        // Aborted: answered by Node's parser handler (parser-refusals.ts: 408 at the request
        // timeout, 400 for a body that broke HTTP), or the sender left (499, nginx's word for it).
        const refusedAs = answer.aborted === true ? connection.refusal : undefined;
        const status = answer.aborted ? (refusedAs === undefined ? 499 : problemCatalogue[refusedAs].status) : answer.status;
        const outcome = answer.aborted ? (refusedAs ?? 'aborted') : answer.outcome;
        metrics.countDelivery(answer.source ?? '_invalid', outcome);
        if (answer.verification?.status === 'failed') {
          metrics.verificationFailures.inc({
            source: metrics.sourceLabel(answer.source ?? '_invalid'),
            reason: answer.verification.reason ?? 'unknown',
          });
        }
        metrics.observeRequest('/api/webhook/:source', req.method ?? '', status, seconds);
        const line: WebhookLogFields = {
          req: { method: req.method, path, remoteAddress: req.socket.remoteAddress },
          status,
          ms: Math.round(seconds * 1e6) / 1e3,
          source: answer.source,
          outcome,
          id: answer.id,
          size,
          verification: answer.verification,
        };
        if (answer.error !== undefined) logger.error({ ...line, err: answer.error }, 'webhook failed');
        else logWebhook(line);
      })
      .catch((error: unknown) => {
        logger.error({ err: error, req: { method: req.method, path } }, 'webhook handler crashed');
        if (!res.headersSent) res.writeHead(500).end();
      });
  };
  return (req, res, connection, expectsContinue) => {
    const mayRead = connection.mayReadRequest(res, expectsContinue);
    if (mayRead === true) {
      handle(req, res, connection, expectsContinue);
      return;
    }
    void Promise.resolve(mayRead).then((open) => {
      if (open) {
        handle(req, res, connection, expectsContinue);
        return;
      }
      // Its answer could never be written: nothing is read or kept, and the sender, seeing the connection close, sends it again.
      logger.info(
        {
          req: { method: req.method, path: (req.url ?? '').split('?')[0], remoteAddress: req.socket.remoteAddress },
          outcome: 'not_read',
        },
        'webhook not read: the answer before it on its connection closed the connection',
      );
    });
  };
}

/**
 * Keeps the request's refusal, if it was one and its sender was answered:
 * at once, or once the body that was not read has arrived (its start is the
 * preview). An aborted request is kept when Node's parser answered it after
 * all (408 at the request timeout, 400 for a body that broke HTTP), with
 * that answer; a sender that left got no answer, and is no refusal.
 */
function keepRefusal(
  keeper: RefusalKeeper | undefined,
  answer: Answer,
  sent: boolean,
  connection: ConnectionState,
  bodyStart: BodyStart | undefined,
): void {
  const facts = answer.refused;
  if (keeper === undefined || facts === undefined) return;
  if (answer.aborted === true) {
    const code = connection.refusal;
    if (code !== undefined) keeper.keep({ ...facts, code, detail: connection.refusalDetail ?? facts.detail });
    return;
  }
  if (!sent) return;
  if (bodyStart === undefined) keeper.keep(facts);
  else bodyStart.then((start, bytes) => keeper.keep({ ...facts, body: [start], size: facts.size || bytes }));
}

/** Writes the answer; its headers are its own (answer.ts), so Content-Length and Connection are added to them, not to a copy. */
function send(res: ServerResponse, answer: Answer, closing: boolean): void {
  const headers: Record<string, string | number> = answer.headers;
  // A 204 (a source's own answer may be one) has no content and no Content-Length (RFC 9110 8.6).
  if (answer.status !== 204) headers['content-length'] = Buffer.byteLength(answer.body);
  if (closing) headers.connection = 'close';
  res.writeHead(answer.status, headers);
  res.end(answer.body);
}
