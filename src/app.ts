import type { Server } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { installErrorHandling } from './platform/http/error-handler.js';
import { deliveryJson, deliveryText } from './deliveries/delivery-json.js';
import { createEdge } from './receive/edge/front-door.js';
import { createFrameworkErrorHandler } from './platform/http/framework-errors.js';
import { createRequestLog } from './platform/http/request-log.js';
import { acceptEmptyJsonBodies } from './platform/http/json-body.js';
import { healthRoutes } from './inbox/health-routes.js';
import { inboxRoutes } from './inbox/inbox-routes.js';
import { fileRoutes } from './inbox/file-routes.js';
import { registerOpenApi, serveOpenApi } from './api/openapi.js';
import { MAX_PARAM_LENGTH } from './api/schemas.js';
import type { Logger } from './platform/observe/logger.js';
import type { Metrics } from './platform/observe/metrics.js';
import { BodyBudget } from './body/body-budget.js';
import { Receiver } from './receive/receiver.js';
import { RefusalKeeper } from './refusals/refusal-keeper.js';
import { RefusalWriter, type RefusalWriterOptions } from './refusals/refusal-writer.js';
import { refusalRoutes } from './refusals/refusal-routes.js';
import { trafficRoutes } from './traffic/traffic-routes.js';
import { SourceRules } from './receive/source-rules.js';
import { TrustedProxies } from './platform/http/remote-address.js';
import { sessionRoutes } from './page/session-routes.js';
import { TokenGuard } from './platform/http/auth.js';
import { WrongTokenThrottle, type ThrottleOptions } from './platform/auth/wrong-token-throttle.js';
import { streamRoute } from './stream/stream-route.js';
import { webPage } from './page/web-page.js';
import { docsPage } from './page/docs-page.js';
import { LocalCommitFeed, type PublishingFeed } from './deliveries/commit-feed.js';
import { StreamHub } from './stream/stream-hub.js';
import type { InboxDatabase } from './inbox/inbox-database.js';
import { WriteQueue } from './inbox/write-queue.js';
import type { NewDelivery } from './deliveries/delivery-store.js';
import type { Destination } from './forwarding/destination.js';
import { Forwarder } from './forwarding/forwarder.js';
import { storedEventTypeSubject } from './event-types/event-type-of-delivery.js';
import { forwardRoutes } from './forwarding/forward-routes.js';
import { ForwardMetrics } from './forwarding/forward-metrics.js';
import { Transforms, type TransformDefinition, type TransformUser } from './transforms/transforms.js';
import { TransformPool } from './transforms/transform-pool.js';
import { TransformMetrics } from './transforms/transform-metrics.js';
import { transformRoutes } from './transforms/transform-routes.js';
import { BackgroundIndex } from './search/background-index.js';
import { eventTypeOf } from './event-types/event-type.js';
import { IssueTracker, type IssueTrackerOptions } from './issues/issue-tracker.js';
import { issueRoutes } from './issues/issue-routes.js';
import { registerIssueGauge } from './issues/issue-metrics.js';
import type { IssueSignals } from './issues/issue-signals.js';
import { notifyNames, resolveAlerts, type Alerts } from './alerts/alerts.js';
import { withoutNotifyDestinations } from './alerts/without-notify-destinations.js';
import { ForwardIssues } from './alerts/forward-issues.js';
import { VerificationWatch } from './alerts/verification-watch.js';
import { Notifier } from './alerts/notifier.js';
import { ISSUES_SOURCE } from './alerts/issue-event.js';

/**
 * Body bytes per group commit, at most (one larger delivery still goes
 * alone). A commit runs on the event loop; without it, a flood of 5 MiB
 * bodies made transactions of up to RECEPTION_QUEUE_MAX_BYTES (256 MiB),
 * and stalls of seconds (bench/RESULTS.md at commit 2d24709, "A flood of 5 MiB bodies").
 */
export const MAX_BATCH_BYTES = 16 * 1024 * 1024;

export interface AppDeps {
  store: InboxDatabase;
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
  /** The config file's transforms (CONTRACT 10) and the routes that use them; none when absent. */
  transforms?: { definitions: TransformDefinition[]; users: ReadonlyMap<string, TransformUser[]> };
  /** Threads that run transforms (2 when absent). */
  transformThreads?: number;
  /** How long a push dispatcher's lease lasts unless renewed (RECEPTION_FORWARD_LEASE_MS; DEFAULT_LEASE_MS when absent). */
  forwardLeaseMs?: number;
  /** How wrong API tokens are throttled per address (DEFAULT_THROTTLE when absent; tests loosen it). */
  wrongTokenThrottle?: Partial<ThrottleOptions>;
  /** Refusals kept per source, at most (RECEPTION_REFUSALS_KEEP; 10,000 when absent); 0 keeps none. */
  refusalsKeep?: number;
  /** Refusals kept in all, at most (RECEPTION_REFUSALS_KEEP_TOTAL; 100,000 when absent). */
  refusalsKeepTotal?: number;
  /** How the refusal writer batches (its defaults when absent; tests make it quicker). */
  refusalWriter?: Partial<Pick<RefusalWriterOptions, 'intervalMs' | 'maxBatch' | 'maxBuffered' | 'retryMs'>>;
  /** How the issue tracker batches and when quiet issues resolve (its defaults when absent; tests make them quicker). */
  issueTracker?: Partial<Pick<IssueTrackerOptions, 'quietMs' | 'sweepMs' | 'flushMs' | 'retryMs'>>;
  /** The config file's `alerts` (CONTRACT 11): the backlog's age and the notify destinations; the defaults when absent. */
  alerts?: Alerts;
  /** Where the causes of issues are told: the app's issue tracker when absent (a test may record them instead). */
  issues?: IssueSignals;
  /** Time between the outbox sweeps that find backlogs (BACKLOG_SWEEP_MS when absent; tests make it short). */
  backlogSweepMs?: number;
}

/** The bounds of the refusals when the settings do not say (CONTRACT 9). */
export const REFUSALS_KEEP = 10_000;
export const REFUSALS_KEEP_TOTAL = 100_000;

export interface App {
  fastify: FastifyInstance;
  server: Server;
  queue: WriteQueue;
  feed: PublishingFeed;
  streams: StreamHub;
  forwarder: Forwarder;
  /** The transforms in force (a reload applies new ones), run off the event loop. */
  transforms: Transforms;
  /** Writes the refusals in batches, off the delivery path; stop it before closing the store. */
  refusals: RefusalWriter;
  /** The search index and event type fill behind the commits (stop it before closing the store). */
  index: BackgroundIndex;
  /**
   * The issues (docs/alerts.md): the parts that see trouble signal it here
   * (IssueSignals); notifications subscribe with `onChange`. Stop it before
   * closing the store: it writes what is pending.
   */
  issues: IssueTracker;
  /** Puts new per-source rules in force (a config reload); requests already running keep theirs. */
  setRules(rules: SourceRules): void;
  /** Puts a config's `alerts` in force (a reload): the backlog's age, and who is told of issues. */
  setAlerts(alerts: Alerts): void;
  /** Tells the notify destinations of an issue that opened or resolved (the tracker's `onChange` is wired to it). */
  notifier: Notifier;
  /** The outbox's causes of issues (dead letters, backlogs): stop it before closing the store. */
  forwardIssues: ForwardIssues;
  /** Marks the app as shutting down: answers from now on close their connection. */
  beginClosing(): void;
}

/**
 * Builds the whole HTTP side without listening. The raw `node:http` front
 * door (receive/edge/) takes every request first and handles the webhook route
 * itself (measured: see bench/RESULTS.md); everything else is Fastify with
 * TypeBox schemas.
 */
export async function buildApp(deps: AppDeps): Promise<App> {
  const { metrics, logger, store } = deps;
  const feed = deps.feed ?? new LocalCommitFeed();
  // First: built before the parts that signal issues (IssueSignals), so that they can be handed it.
  const issues = new IssueTracker({ store: store.issues, logger, ...deps.issueTracker });
  registerIssueGauge(metrics.registry, () => store.issues.countOpen());
  // Commits go through the forwarder (declared below; a commit comes only once the app is built): it leases forwards at the commit.
  const commits = { append: (batch: readonly NewDelivery[]) => forwarder.append(batch, (b) => store.append(b)) };
  const queue = new WriteQueue(commits, {
    maxPending: deps.queueMaxPending,
    maxPendingBytes: deps.queueMaxPendingBytes,
    maxBatch: 512,
    maxBatchBytes: MAX_BATCH_BYTES,
    onCommit: (size, seconds, ok) => {
      metrics.recordCommit(size, seconds, ok);
      if (ok) {
        feed.publish();
        // Declared below; a commit comes only once the app is built.
        index.wake();
      }
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
  let commitsSeen = 0;
  const index = new BackgroundIndex({
    store,
    logger,
    // Deliveries stored before event types were kept get the type the receiver would give them now.
    derive: (d) => eventTypeOf(storedEventTypeSubject(d), rules.forSource(d.source)?.eventType),
    busy: () => {
      const busy = queue.depth > 0 || queue.commits !== commitsSeen;
      commitsSeen = queue.commits;
      return busy;
    },
  });
  let alerts = deps.alerts ?? resolveAlerts(undefined);
  let notifying = notifyNames(alerts);
  // Never an issue about a notify destination (CONTRACT 11).
  // Never an issue about a notify destination: its own failures would notify it again (CONTRACT 11).
  const signals = withoutNotifyDestinations(deps.issues ?? issues, { has: (name) => notifying.has(name) });
  const verificationWatch = new VerificationWatch(signals);
  const trustedProxies = new TrustedProxies(deps.trustedProxies);
  const guard = new TokenGuard(deps.token, trustedProxies, new WrongTokenThrottle(deps.wrongTokenThrottle));
  const receiver = new Receiver({
    queue,
    trustedProxies,
    redactHeaders: new Set(deps.redactHeaders),
    rules: () => rules,
    onVerificationFailed: (source, failure) => verificationWatch.failed(source, failure),
  });
  const incoming = new BodyBudget(deps.incomingMaxBytes);
  const refusals = new RefusalWriter({
    store: store.refusals,
    bounds: { perSource: deps.refusalsKeep ?? REFUSALS_KEEP, total: deps.refusalsKeepTotal ?? REFUSALS_KEEP_TOTAL },
    log: logger,
    traffic: store.traffic,
    ...deps.refusalWriter,
    onKept: (batch) => {
      for (const refusal of batch) metrics.refusalsKept.inc({ code: refusal.code });
    },
    onDropped: (count, reason) => metrics.refusalsDropped.inc({ reason }, count),
  });
  const edge = createEdge({
    receiver,
    logger,
    metrics,
    incoming,
    requestTimeoutMs: deps.requestTimeoutMs,
    keepAliveTimeoutMs: deps.keepAliveTimeoutMs,
    ...((deps.refusalsKeep ?? REFUSALS_KEEP) > 0 ? { refusals: new RefusalKeeper(refusals, new Set(deps.redactHeaders)) } : {}),
  });
  const transforms = new Transforms(new TransformPool(deps.transformThreads ?? 2), new TransformMetrics(metrics.registry));
  transforms.apply(deps.transforms?.definitions ?? [], deps.transforms?.users);
  const forwarder = new Forwarder({
    outbox: store.outbox,
    transforms,
    feed,
    logger,
    metrics: new ForwardMetrics(metrics.registry),
    redactHeaders: new Set(deps.redactHeaders),
    leaseMs: deps.forwardLeaseMs,
    issues: signals,
  });
  forwarder.apply(deps.destinations ?? new Map());
  const forwardIssues = new ForwardIssues({
    outbox: store.outbox,
    signals,
    backlogSeconds: () => alerts.backlogSeconds,
    pushDestinations: () => forwarder.list().flatMap((d) => (d.kind === 'pull' ? [] : [d.name])),
    logger,
    ...(deps.backlogSweepMs === undefined ? {} : { intervalMs: deps.backlogSweepMs }),
  });
  const notifier = new Notifier({ queue, targets: () => alerts.notify, logger });
  issues.onChange((change) => void notifier.notify(change));

  const logRequest = createRequestLog(logger, metrics);
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
    // The raw front door: Fastify gets what is not a webhook.
    serverFactory: edge.serverFactory,
    clientErrorHandler: edge.clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();

  installErrorHandling(fastify);
  acceptEmptyJsonBodies(fastify);
  fastify.addHook('onResponse', async (request, reply) => logRequest(request, reply));
  fastify.addHook('onSend', async (_request, reply) => {
    if (edge.closing) void reply.header('connection', 'close');
  });
  await registerOpenApi(fastify);
  serveOpenApi(fastify);
  await fastify.register(healthRoutes, { store, queue, incoming, metrics });
  await fastify.register(inboxRoutes, { store, guard });
  await fastify.register(fileRoutes, { store, guard });
  await fastify.register(refusalRoutes, { store: store.refusals, guard });
  await fastify.register(trafficRoutes, { store: store.traffic, guard });
  await fastify.register(streamRoute, { hub: streams, guard });
  await fastify.register(forwardRoutes, {
    deliveries: store,
    outbox: store.outbox,
    guard,
    forwarder,
    transformOf: (source, destination) =>
      source === ISSUES_SOURCE
        ? (alerts.notify.find((target) => target.destination === destination)?.transform ?? null)
        : (rules.forSource(source)?.routes.find((route) => route.to === destination)?.transform ?? null),
    afterRetryOrCancel: () => void forwardIssues.afterRetryOrCancel().catch(() => undefined),
  });
  await fastify.register(issueRoutes, { store: store.issues, tracker: issues, guard });
  await fastify.register(transformRoutes, { deliveries: store, transforms, guard });
  await fastify.register(sessionRoutes, { guard });
  fastify.addHook('onClose', async () => transforms.close());
  fastify.addHook('onClose', async () => forwardIssues.stop());
  await fastify.register(webPage);
  await fastify.register(docsPage);
  await fastify.ready();
  const beginClosing = (): void => {
    edge.beginClosing();
    streams.closeAll();
  };
  const setRules = (next: SourceRules): void => {
    rules = next;
    metrics.setConfiguredSources(next.configuredSources);
  };
  const setAlerts = (next: Alerts): void => {
    alerts = next;
    notifying = notifyNames(next);
  };
  index.start();
  forwardIssues.start();
  return {
    fastify,
    server: edge.server,
    queue,
    feed,
    streams,
    forwarder,
    transforms,
    refusals,
    index,
    issues,
    setRules,
    setAlerts,
    notifier,
    forwardIssues,
    beginClosing,
  };
}
