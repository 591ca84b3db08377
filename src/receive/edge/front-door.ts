import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../../platform/observe/logger.js';
import type { Metrics } from '../../platform/observe/metrics.js';
import type { BodyBudget } from '../../body/body-budget.js';
import type { Receiver } from '../receiver.js';
import type { RefusalKeeper } from '../../refusals/refusal-keeper.js';
import { Connections } from './connection-state.js';
import { createParserRefusalHandler, type ParserError } from './parser-refusals.js';
import { createConnectHandler, hasUnknownTransferCoding, hostProblem, refuseBeforeRouting } from './protocol-refusals.js';
import { originForm } from './request-target.js';
import { createWebhookHandler, isWebhookUrl } from './webhook-handler.js';

export interface EdgeOptions {
  /** Decides each webhook request. */
  receiver: Receiver;
  logger: Logger;
  metrics: Metrics;
  /** Bounds the bytes of all webhook bodies arriving at once. */
  incoming: BodyBudget;
  /** Time for a request's headers and body to arrive, in ms. */
  requestTimeoutMs: number;
  /** Time an idle keep-alive connection stays open, in ms (5000 when absent). */
  keepAliveTimeoutMs?: number;
  /** Keeps the refusals of the webhook route, wherever they are made (CONTRACT 9); none kept when absent. */
  refusals?: RefusalKeeper;
}

type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The HTTP server with its front door, and what Fastify is given to sit behind it. */
export interface Edge {
  /** The `node:http` server, once Fastify has called `serverFactory`; not listening yet. */
  readonly server: Server;
  /** Fastify's `serverFactory` option: Fastify's handler gets every request that is not a webhook. */
  readonly serverFactory: (fastifyHandler: RequestHandler) => Server;
  /**
   * Fastify's `clientErrorHandler` option: answers what Node's parser
   * refuses. It goes through Fastify, which would otherwise install its own
   * listener on the server's `clientError` event.
   */
  readonly clientErrorHandler: (error: ParserError, socket: Socket) => void;
  /** True once shutdown began: answers from then on close their connection. */
  readonly closing: boolean;
  beginClosing(): void;
}

/**
 * The raw `node:http` front door. Every request passes here first: the
 * checks HTTP itself makes (Host, transfer coding, `Expect`, `CONNECT`,
 * what the parser refuses) are answered here as problems; the webhook route
 * is handled here, around any framework (measured: see bench/RESULTS.md);
 * everything else goes on to Fastify. Per-connection state (answers in
 * flight, pipelined webhooks, a body being discarded, a parser refusal)
 * lives in one `ConnectionState` per socket.
 */
export function createEdge(options: EdgeOptions): Edge {
  const { logger, refusals } = options;
  const connections = new Connections();
  let closing = false;
  let server: Server | undefined;
  const receive = createWebhookHandler({ ...options, isClosing: () => closing });

  const serverFactory = (fastifyHandler: RequestHandler): Server => {
    // `expectsContinue`: the request asked `Expect: 100-continue` (see checkContinue below).
    const dispatch = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): void => {
      const connection = connections.of(req.socket);
      connection.begin(res);
      const wrongHost = hostProblem(req);
      if (wrongHost !== undefined) {
        refuseBeforeRouting(logger, req, res, 'bad_request', wrongHost, refusals);
        return;
      }
      if (hasUnknownTransferCoding(req)) {
        refuseBeforeRouting(
          logger,
          req,
          res,
          'not_implemented',
          'Only the chunked transfer coding is understood here: send the body uncompressed.',
        );
        return;
      }
      req.url = originForm(req.url ?? '');
      if (isWebhookUrl(req.url)) {
        receive(req, res, connection, expectsContinue);
        return;
      }
      if (expectsContinue) res.writeContinue();
      fastifyHandler(req, res);
    };
    server = createServer(
      {
        requestTimeout: options.requestTimeoutMs,
        headersTimeout: options.requestTimeoutMs,
        connectionsCheckingInterval: Math.min(1000, Math.max(100, Math.floor(options.requestTimeoutMs / 10))),
        keepAliveTimeout: options.keepAliveTimeoutMs ?? 5000,
        // Checked in `dispatch`, so that the answer is a problem with its log line, not Node's bare 400.
        requireHostHeader: false,
        // `timeout` (socket inactivity) stays 0, Node's default: the two
        // above bound a request and an idle connection, and a live stream
        // (/api/stream) may be quiet between its heartbeats.
      },
      (req: IncomingMessage, res: ServerResponse) => dispatch(req, res, false),
    );
    // Every header is kept (CONTRACT 2: as received). Node keeps only the
    // first 2,000 by default and drops the rest silently, a Content-Type or
    // a signature after them included; Node's 16 KiB limit on the header
    // section bounds their number anyway (431 headers_too_large).
    server.maxHeadersCount = 0;
    answerHalfClosedSenders(server);
    server.on('connect', createConnectHandler(logger, refusals));
    // `Expect` with anything but 100-continue: Node's own 417 has no body and no log line.
    server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
      connections.of(req.socket).begin(res);
      refuseBeforeRouting(logger, req, res, 'expectation_failed', 'Only "Expect: 100-continue" is understood here.', refusals);
    });
    // `Expect: 100-continue`: Node would answer 100 at once; the webhook
    // route answers it only once the request passed its checks.
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => dispatch(req, res, true));
    return server;
  };

  return {
    get server() {
      if (server === undefined) throw new Error('Fastify did not call the server factory');
      return server;
    },
    serverFactory,
    clientErrorHandler: createParserRefusalHandler(logger, connections, refusals),
    get closing() {
      return closing;
    },
    beginClosing: () => {
      closing = true;
    },
  };
}

/**
 * A sender that half-closes its connection after writing its request (as
 * `nc -N` or a raw-socket client does) is still answered: Node's default
 * ends the connection at the sender's FIN and aborts the request, so a
 * delivery whose commit outlived the FIN was stored and its 200 never sent.
 * `httpAllowHalfOpen` is Node's own switch for this (an own property of
 * every `http.Server` since Node 0.x, not in its typings); it is set here
 * only, and test/unit/http/half-open-switch.test.ts fails if Node drops it.
 */
export function answerHalfClosedSenders(server: Server): void {
  if (!Object.hasOwn(server, 'httpAllowHalfOpen')) throw new Error('this Node has no http.Server httpAllowHalfOpen');
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
}
