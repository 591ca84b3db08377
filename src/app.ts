import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { createClientErrorHandler } from './http/edge/parser-refusals.js';
import { installErrorHandling } from './http/error-handler.js';
import { deliveryJson, deliveryText } from './http/delivery-json.js';
import { createConnectHandler, hasUnknownTransferCoding, hostProblem, refuseBeforeRouting } from './http/edge/protocol-refusals.js';
import { createFrameworkErrorHandler } from './http/framework-errors.js';
import { acceptEmptyJsonBodies } from './http/json-body.js';
import { healthRoutes } from './http/health-routes.js';
import { inboxRoutes } from './http/inbox-routes.js';
import { registerOpenApi, serveOpenApi } from './http/openapi.js';
import { originForm } from './http/edge/request-target.js';
import { MAX_PARAM_LENGTH } from './http/schemas.js';
import { createWebhookHandler, isWebhookUrl } from './http/edge/webhook-handler.js';
import type { Logger } from './observe/logger.js';
import type { Metrics } from './observe/metrics.js';
import { BodyBudget } from './receive/body-budget.js';
import { Receiver } from './receive/receiver.js';
import { SourceRules } from './receive/source-rules.js';
import { TrustedProxies } from './receive/remote-address.js';
import { sessionRoutes } from './http/session-routes.js';
import { TokenGuard } from './http/auth.js';
import { WrongTokenThrottle, type ThrottleOptions } from './auth/wrong-token-throttle.js';
import { streamRoute } from './http/stream-route.js';
import { webPage } from './http/web-page.js';
import { LocalCommitFeed, type PublishingFeed } from './stream/commit-feed.js';
import { StreamHub } from './stream/stream-hub.js';
import type { InboxStore } from './store/inbox-store.js';
import { WriteQueue } from './store/write-queue.js';
import type { Destination } from './forward/destination.js';
import { Forwarder } from './forward/forwarder.js';
import { forwardRoutes } from './http/forward-routes.js';
import { ForwardMetrics } from './observe/forward-metrics.js';

export interface AppDeps {
  store: InboxStore;
  token: string;
  logger: Logger;
  metrics: Metrics;
  maxBodyBytes: number;
  trustedProxies: readonly string[];
  redactHeaders: readonly string[];
  /** Time for a request's headers and body to arrive, in ms. */
  requestTimeoutMs: number;
  /** Time an idle keep-alive connection stays open, in ms (5000 when absent). */
  keepAliveTimeoutMs?: number;
  queueMaxPending: number;
  queueMaxPendingBytes: number;
  /** Bytes of webhook bodies held while they arrive, over all requests (see BodyBudget). */
  incomingMaxBytes: number;
  /** Time between heartbeat comments on `/api/stream`, in ms. */
  streamHeartbeatMs: number;
  /** Bytes a stream client may leave unread before it is disconnected. */
  streamMaxBufferedBytes: number;
  /** Per-source rules from the config file; without it every source is accepted as is. */
  rules?: SourceRules;
  /** Wakes live readers; defaults to one that sees this process's commits only. */
  feed?: PublishingFeed;
  /** The config file's destinations (CONTRACT 6); none when absent. */
  destinations?: ReadonlyMap<string, Destination>;
  /** What a forward's lease adds to its destination's timeoutMs (RECEPTION_FORWARD_LEASE_MARGIN_MS). */
  forwardLeaseMarginMs?: number;
  /** How wrong API tokens are throttled per address (DEFAULT_THROTTLE when absent; tests loosen it). */
  wrongTokenThrottle?: Partial<ThrottleOptions>;
}

export interface App {
  fastify: FastifyInstance;
  server: Server;
  queue: WriteQueue;
  feed: PublishingFeed;
  streams: StreamHub;
  forwarder: Forwarder;
  /** Puts new per-source rules in force (a config reload); requests already running keep theirs. */
  setRules(rules: SourceRules): void;
  /** Marks the app as shutting down: answers from now on close their connection. */
  beginClosing(): void;
}

/**
 * Builds the whole HTTP side without listening. The webhook route is a plain
 * `node:http` handler in front of Fastify (measured: see bench/RESULTS.md);
 * everything else is Fastify with TypeBox schemas.
 */
export async function buildApp(deps: AppDeps): Promise<App> {
  const { metrics, logger, store } = deps;
  const feed = deps.feed ?? new LocalCommitFeed();
  const queue = new WriteQueue(store, {
    maxPending: deps.queueMaxPending,
    maxPendingBytes: deps.queueMaxPendingBytes,
    maxBatch: 512,
    onCommit: (size, seconds, ok) => {
      metrics.recordCommit(size, seconds, ok);
      if (ok) feed.publish();
    },
  });
  const streams = new StreamHub({
    store,
    feed,
    render: (delivery) => deliveryText(deliveryJson(delivery)),
    heartbeatMs: deps.streamHeartbeatMs,
    maxBufferedBytes: deps.streamMaxBufferedBytes,
  });
  let rules = deps.rules ?? SourceRules.fromConfig(undefined, { maxBodyBytes: deps.maxBodyBytes, anyJson: false });
  metrics.setConfiguredSources(rules.configuredSources);
  const trustedProxies = new TrustedProxies(deps.trustedProxies);
  const guard = new TokenGuard(deps.token, trustedProxies, new WrongTokenThrottle(deps.wrongTokenThrottle));
  const receiver = new Receiver({
    queue,
    trustedProxies,
    redactHeaders: new Set(deps.redactHeaders),
    rules: () => rules,
  });
  let closing = false;
  const incoming = new BodyBudget(deps.incomingMaxBytes);
  const receive = createWebhookHandler({ receiver, logger, metrics, incoming, isClosing: () => closing });
  const forwarder = new Forwarder({
    outbox: store.outbox, feed, logger, metrics: new ForwardMetrics(metrics.registry), redactHeaders: new Set(deps.redactHeaders),
    leaseMarginMs: deps.forwardLeaseMarginMs,
  });
  forwarder.apply(deps.destinations ?? new Map());

  /** One log line and the latency metric per request (the webhook route writes its own). */
  const logRequest = (request: FastifyRequest, reply: FastifyReply): void => {
    const seconds = reply.elapsedTime / 1000;
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.observeRequest(route, request.method, reply.statusCode, seconds);
    // The root logger, not request.log: Fastify's `req` serializer would drop `path` and `remoteAddress`.
    logger.info({
      reqId: request.id,
      req: { method: request.method, path: request.url.split('?')[0], remoteAddress: request.ip },
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 1000) / 1000,
    }, 'request');
  };

  let server: Server | undefined;
  const fastifyLogger: FastifyBaseLogger = logger;
  const fastify = Fastify({
    loggerInstance: fastifyLogger,
    // One line per request is written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    // Ids up to this length reach the routes (and get 404 when unknown);
    // longer ones, and bad percent-escapes, go to frameworkErrors.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: createFrameworkErrorHandler(guard, logRequest),
    clientErrorHandler: createClientErrorHandler(logger),
    serverFactory: (fastifyHandler) => {
      // The webhook route goes around Fastify; `expectsContinue`: see checkContinue below.
      const dispatch = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): void => {
        const wrongHost = hostProblem(req);
        if (wrongHost !== undefined) {
          refuseBeforeRouting(logger, req, res, 'bad_request', wrongHost);
          return;
        }
        if (hasUnknownTransferCoding(req)) {
          refuseBeforeRouting(logger, req, res, 'not_implemented', 'Only the chunked transfer coding is understood here: send the body uncompressed.');
          return;
        }
        req.url = originForm(req.url ?? '');
        if (isWebhookUrl(req.url)) {
          receive(req, res, expectsContinue);
          return;
        }
        if (expectsContinue) res.writeContinue();
        fastifyHandler(req, res);
      };
      server = createServer({
        requestTimeout: deps.requestTimeoutMs,
        headersTimeout: deps.requestTimeoutMs,
        connectionsCheckingInterval: Math.min(1000, Math.max(100, Math.floor(deps.requestTimeoutMs / 10))),
        keepAliveTimeout: deps.keepAliveTimeoutMs ?? 5000,
        // Checked in `dispatch`, so that the answer is a problem with its log line, not Node's bare 400.
        requireHostHeader: false,
        // `timeout` (socket inactivity) stays 0, Node's default: the two
        // above bound a request and an idle connection, and a live stream
        // (/api/stream) may be quiet between its heartbeats.
      }, (req: IncomingMessage, res: ServerResponse) => dispatch(req, res, false));
      // Every header is kept (CONTRACT 2: as received). Node keeps only the
      // first 2,000 by default and drops the rest silently, a Content-Type or
      // a signature after them included; Node's 16 KiB limit on the header
      // section bounds their number anyway (431 headers_too_large).
      server.maxHeadersCount = 0;
      server.on('connect', createConnectHandler(logger));
      // `Expect` with anything but 100-continue: Node's own 417 has no body and no log line.
      server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
        refuseBeforeRouting(logger, req, res, 'expectation_failed', 'Only "Expect: 100-continue" is understood here.');
      });
      // `Expect: 100-continue`: Node would answer 100 at once; the webhook
      // route answers it only once the request passed its checks.
      server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => dispatch(req, res, true));
      return server;
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  installErrorHandling(fastify);
  acceptEmptyJsonBodies(fastify);
  fastify.addHook('onResponse', async (request, reply) => logRequest(request, reply));
  fastify.addHook('onSend', async (_request, reply) => {
    if (closing) void reply.header('connection', 'close');
  });
  await registerOpenApi(fastify);
  serveOpenApi(fastify);
  await fastify.register(healthRoutes, { store, queue, incoming, metrics });
  await fastify.register(inboxRoutes, { store, guard });
  await fastify.register(streamRoute, { hub: streams, guard });
  await fastify.register(forwardRoutes, { store, guard, forwarder });
  await fastify.register(sessionRoutes, { guard });
  await fastify.register(webPage);
  await fastify.ready();
  if (server === undefined) throw new Error('Fastify did not call the server factory');
  const beginClosing = (): void => {
    closing = true;
    streams.closeAll();
  };
  const setRules = (next: SourceRules): void => {
    rules = next;
    metrics.setConfiguredSources(next.configuredSources);
  };
  return { fastify, server, queue, feed, streams, forwarder, setRules, beginClosing };
}
