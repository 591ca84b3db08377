import { MEASURED_SOURCE, WARMUP_SOURCE, type LoadRequest, type StartCommand } from './cases.js';
import { stopChild } from './child-processes.js';
import {
  forwardingReception,
  profileFlags,
  receptionCounts,
  referenceCounts,
  referenceOutbox,
  startDestination,
  subdir,
  succeeded,
  type ForwardCase,
  type ForwardContext,
  type Sample,
  type SustainedResult,
} from './forward-cases.js';
import { receivedBy, waitFor } from './forward-api.js';
import { brokerSink, type BrokerKind, type BrokerSink } from './forward-brokers.js';
import { cpuSeconds } from './process-stats.js';
import { startServer, tail } from './server-process.js';
import { storedCount } from './stored-count.js';
import { transformRunCost } from './transform-histogram.js';

/** How long the backlog left by the warm-up, or by the measured window, may take to drain, at most. */
const DRAIN_LIMIT_MS = 180_000;

interface Target {
  start(context: ForwardContext, destinationUrl: string, nodeFlags: string[], broker?: BrokerSink): StartCommand;
  counts(url: string, context: ForwardContext): Promise<Omit<Sample, 'at' | 'received'>>;
  /** Deliveries of the measured source stored, for the stored-versus-2xx check; undefined: checked from the counts. */
  storedMeasured?(url: string, context: ForwardContext): Promise<number>;
  /** A broker destination instead of the HTTP one: made before the server starts, counted, deleted after. */
  broker?: BrokerKind;
  /** The routes run this transform (its code) at each attempt; its run cost is read from the metrics. */
  transform?: string;
}

/**
 * The transform of `forward sustained transform`: small, as an operator's
 * is (CONTRACT 10's example): a few fields picked from the body into a new
 * JSON body, and a header added.
 */
const SMALL_TRANSFORM =
  'export default function (event) {\n' +
  '  const body = event.body ?? {};\n' +
  '  return { body: { text: `${event.eventType ?? "event"} ${event.id}`, keys: Object.keys(body).length }, headers: { "x-kind": "bench" } };\n' +
  '}\n';

function reception(concurrency?: number, broker?: BrokerKind, transform?: string): Target {
  return {
    start: (context, destinationUrl, nodeFlags, sink) =>
      forwardingReception(context, destinationUrl, false, nodeFlags, concurrency, sink?.settings, transform),
    ...(broker === undefined ? {} : { broker }),
    ...(transform === undefined ? {} : { transform }),
    counts: (url, { token }) => receptionCounts({ url, token }),
    storedMeasured: (url, { token }) => storedCount(url, token, MEASURED_SOURCE),
  };
}

function reference(concurrency: number): Target {
  return {
    start: (context, destinationUrl, nodeFlags) => referenceOutbox(context, destinationUrl, nodeFlags, concurrency),
    counts: (url) => referenceCounts(url),
  };
}

/**
 * Sustained forwarding: wrk sends deliveries for `seconds` as fast as the
 * server answers, each one is stored and forwarded to the destination. The
 * backlog (unsettled forwards) is read at the start, the middle and the end
 * of the window; the forwarding rate is the growth of the store's
 * `succeeded` count over the window. After the load, the rest of the
 * backlog drains, and every delivery must have been forwarded.
 */
async function runSustained(
  target: Target,
  name: string,
  description: string,
  context: ForwardContext,
  problems: string[],
): Promise<SustainedResult> {
  const result: SustainedResult = { kind: 'sustained', name, description, samples: [], check: '–' };
  const destination = await startDestination(context);
  const sink = target.broker === undefined ? undefined : await brokerSink(target.broker);
  const received = sink === undefined ? () => receivedBy(destination.url) : () => sink.received();
  try {
    const server = await startServer(
      target.start(context, destination.url, profileFlags(context, 'server'), sink),
      subdir(context, 'server'),
    );
    try {
      await measureSustained(
        target,
        context,
        server.url,
        // A broker case's HTTP destination idles: its CPU says nothing (the broker's is not read).
        sink === undefined ? destination.child.pid : undefined,
        server.child.pid,
        received,
        result,
        problems,
        name,
      );
      if (target.transform !== undefined) {
        const cost = await transformRunCost(server.url, context.token);
        if (cost === undefined) problems.push(`${name}: no transform run was counted`);
        else result.transformRun = cost;
      }
    } finally {
      const exit = await stopChild(server.child, 'SIGTERM', 15_000);
      if (exit !== 0) problems.push(`${name}: server did not exit cleanly after SIGTERM (${exit})\n${tail(server.stderrFile)}`);
    }
  } finally {
    await stopChild(destination.child, 'SIGTERM', 5000);
    await sink?.remove();
  }
  return result;
}

async function measureSustained(
  target: Target,
  context: ForwardContext,
  url: string,
  destinationPid: number | undefined,
  serverPid: number,
  receivedNow: () => Promise<number>,
  result: SustainedResult,
  problems: string[],
  name: string,
): Promise<void> {
  const request: LoadRequest = {
    path: `/api/webhook/${MEASURED_SOURCE}`,
    warmupPath: `/api/webhook/${WARMUP_SOURCE}`,
    headers: { 'Content-Type': 'application/json' },
    body: context.body,
  };
  const run = { request, connections: context.connections, workDir: context.dir };
  const sample = async (start: number): Promise<Sample> => {
    const [counts, received] = await Promise.all([target.counts(url, context), receivedNow()]);
    return { at: (performance.now() - start) / 1000, ...counts, received };
  };
  // Once the load stopped: polls the destination's count (cheap) until it got a forward of every stored
  // delivery, then the server (GET /api/destinations counts every unsettled forward: 4 ms at 40,000).
  const drained = async (): Promise<boolean> => {
    const { stored } = await target.counts(url, context);
    const deadline = Date.now() + DRAIN_LIMIT_MS;
    return (
      (await waitFor(async () => (await receivedNow()) >= stored, DRAIN_LIMIT_MS, 20)) &&
      waitFor(async () => (await target.counts(url, context)).pending === 0, Math.max(0, deadline - Date.now()), 20)
    );
  };

  if (context.warmupSeconds > 0) {
    await context.generator.run({ ...run, url: url + request.warmupPath, seconds: context.warmupSeconds });
    if (!(await drained())) throw new Error(`the warm-up's forwards did not drain within ${DRAIN_LIMIT_MS / 1000} s`);
  }
  const storedBefore = (await target.counts(url, context)).stored;
  const start = performance.now();
  const first = await sample(start);
  const cpu0 = cpuSeconds(serverPid);
  const destinationCpu0 = destinationPid === undefined ? undefined : cpuSeconds(destinationPid);
  let middle: Promise<Sample | undefined> | undefined;
  const timer = setTimeout(
    () => {
      middle = sample(start).catch(() => undefined);
    },
    (context.seconds * 1000) / 2,
  );
  const load = await context.generator
    .run({ ...run, url: url + request.path, seconds: context.seconds })
    .finally(() => clearTimeout(timer));
  const last = await sample(start);
  const cpu1 = cpuSeconds(serverPid);
  const destinationCpu1 = destinationPid === undefined ? undefined : cpuSeconds(destinationPid);
  result.load = load;
  const mid = await middle;
  result.samples = [first, ...(mid === undefined ? [] : [mid]), last];
  const window = last.at - first.at;
  const forwards = succeeded(last) - succeeded(first);
  result.forwardsPerSecond = forwards / window;
  result.receivedPerSecond = (last.received - first.received) / window;
  result.backlogPerSecond = (last.pending - first.pending) / window;
  if (cpu0 !== undefined && cpu1 !== undefined) {
    result.serverCpuPercent = (100 * (cpu1 - cpu0)) / window;
    if (forwards > 0) result.cpuUsPerForward = ((cpu1 - cpu0) * 1e6) / forwards;
  }
  if (destinationCpu0 !== undefined && destinationCpu1 !== undefined)
    result.destinationCpuPercent = (100 * (destinationCpu1 - destinationCpu0)) / window;
  if (load.non2xx > 0 || load.socketErrors > 0 || load.timeouts > 0) {
    problems.push(`${name}: ${load.non2xx} non-2xx answers, ${load.socketErrors} socket errors, ${load.timeouts} timeouts`);
  }

  // The rest of the backlog, after the load: every delivery must reach the destination.
  const tailStart = performance.now();
  const allDrained = await drained();
  const end = await sample(start);
  result.samples.push(end);
  const checks: string[] = [];
  if (allDrained) {
    result.tailSeconds = (performance.now() - tailStart) / 1000;
    if (last.pending > 0) result.tailForwardsPerSecond = last.pending / result.tailSeconds;
  } else {
    checks.push(`**${end.pending} forwards not drained ${DRAIN_LIMIT_MS / 1000} s after the load**`);
    problems.push(`${name}: ${end.pending} forwards still unsettled ${DRAIN_LIMIT_MS / 1000} s after the load stopped`);
  }
  const stored = target.storedMeasured === undefined ? end.stored - storedBefore : await target.storedMeasured(url, context);
  if (stored < load.ok) {
    checks.push(`**LOST ${load.ok - stored}**: ${stored} stored, ${load.ok} acknowledged`);
    problems.push(`${name}: acknowledged ${load.ok} deliveries but stored only ${stored}`);
  } else {
    checks.push(`${stored} stored ≥ ${load.ok} acknowledged`);
  }
  if (end.failed > 0) problems.push(`${name}: ${end.failed} forwards failed`);
  if (end.received < succeeded(end))
    problems.push(`${name}: ${succeeded(end)} forwards succeeded but the destination received only ${end.received}`);
  checks.push(
    `${succeeded(end)} of ${end.stored} forwards succeeded, ${end.failed} failed; destination received ${end.received}`,
  );
  result.check = checks.join('; ');
}

function sustained(name: string, description: string, target: Target): ForwardCase {
  return { name, description, run: (context, problems) => runSustained(target, name, description, context, problems) };
}

export const SUSTAINED_CASES: readonly ForwardCase[] = [
  sustained(
    'forward sustained',
    'Reception (durability=full, logs at info) receiving as fast as wrk sends, each delivery forwarded ' +
      'to a local destination that answers 204 (push, the default concurrency of 10)',
    reception(),
  ),
  // Issue 32: the same with a small transform on the route, run at each attempt on the transform threads.
  sustained(
    'forward sustained transform',
    'the same (concurrency 10) with a small transform on the route: each attempt runs it in its sandbox on a transform thread, ' +
      'then sends its JSON output',
    reception(undefined, undefined, SMALL_TRANSFORM),
  ),
  // One attempt per slot per turn of the event loop, and ingest's commits make the turns long:
  // the same with as many slots as wrk has connections.
  sustained(
    'forward sustained concurrency=50',
    "the same with the destination's concurrency at 50, as many as wrk's connections",
    reception(50),
  ),
  // Issue 20: the same to each broker, JetStream acks, publisher confirms and XADD replies.
  sustained(
    'forward sustained nats',
    'the same (concurrency 10) to NATS JetStream on this machine: each publish waits for its stream ack',
    reception(undefined, 'nats'),
  ),
  sustained(
    'forward sustained amqp',
    'the same (concurrency 10) to RabbitMQ on this machine: persistent, mandatory, each waits for its publisher confirm',
    reception(undefined, 'amqp'),
  ),
  sustained(
    'forward sustained redis',
    'the same (concurrency 10) to Redis Streams on this machine: each XADD waits for its reply',
    reception(undefined, 'redis'),
  ),
  sustained(
    'ref outbox floor',
    'the FULL prototype plus an outbox row per delivery, POSTed by a bare undici pump (10 at a time) ' +
      'and marked done 100 at a time (or 10 ms after the first): no leases, attempts, logs or metrics',
    reference(10),
  ),
  sustained('ref outbox floor concurrency=50', 'the same floor with 50 POSTs in flight', reference(50)),
];
