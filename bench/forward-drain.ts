import { join } from 'node:path';
import { MEASURED_SOURCE } from './cases.js';
import { runToEnd, stopChild } from './child-processes.js';
import { call, destinationCounts, receivedBy, sendMany, waitFor, type Api } from './forward-api.js';
import {
  FLOOR,
  FLOOR_SCRIPT,
  forwardingReception,
  profileFlags,
  PULL,
  PUSH,
  startDestination,
  subdir,
  type DrainResult,
  type DrainRow,
  type ForwardCase,
  type ForwardContext,
} from './forward-cases.js';
import { cpuSeconds } from './process-stats.js';
import { pullDrain } from './pull-consumer.js';
import { startServer, tail, type ServerUnderTest } from './server-process.js';

/** Forwards per pull claim, and acks in flight at once (the brief of issue 18). */
const PULL_MAX = 100;
const PULL_ACK_CONCURRENCY = 10;
/** The floor script: the same 10 POSTs in flight as Reception's default concurrency, 100 marked done per transaction. */
const FLOOR_CONCURRENCY = 10;
const FLOOR_BATCH = 100;

/** Each phase may take this long per forward at most (5 ms: 200 forwards a second), and at least two minutes. */
const phaseLimitMs = (forwards: number): number => Math.max(120_000, forwards * 5);

interface Phase {
  server: ServerUnderTest;
  api: Api;
}

/**
 * Starts Reception on the case's data for one phase, runs `work`, and stops
 * it. Each phase is its own process, so that its CPU and its profile hold
 * that phase alone.
 */
async function inPhase<T>(
  context: ForwardContext,
  destinationUrl: string,
  name: string,
  problems: string[],
  work: (phase: Phase) => Promise<T>,
): Promise<T> {
  const server = await startServer(
    forwardingReception(context, destinationUrl, true, profileFlags(context, name)),
    subdir(context, name),
  );
  try {
    return await work({ server, api: { url: server.url, token: context.token } });
  } finally {
    const exit = await stopChild(server.child, 'SIGTERM', 15_000);
    if (exit !== 0)
      problems.push(`forward drain (${name}): server did not exit cleanly after SIGTERM (${exit})\n${tail(server.stderrFile)}`);
  }
}

const perForwardUs = (before: number | undefined, after: number | undefined, forwards: number): number | undefined =>
  before === undefined || after === undefined || forwards === 0 ? undefined : ((after - before) * 1e6) / forwards;

/**
 * The drain rate: `drainForwards` deliveries stored while the push
 * destination is paused (each with a forward to the push destination, to a
 * pull destination and to one for the floor), then each backlog drained by
 * a fresh server: pushed by Reception once resumed, pulled by a consumer
 * that claims 100 at a time and acks each, and, with the server stopped,
 * by the floor script on the same file.
 */
async function runDrain(context: ForwardContext, problems: string[]): Promise<DrainResult> {
  const n = context.drainForwards;
  const result: DrainResult = { kind: 'drain', name: 'forward drain', description: DESCRIPTION, rows: [], check: '–' };
  const checks: string[] = [];
  const destination = await startDestination(context);
  const destinationCpu = (): number | undefined => cpuSeconds(destination.child.pid);
  try {
    await inPhase(context, destination.url, 'fill', problems, async ({ api }) => {
      await call(api, 'POST', `/api/destinations/${PUSH}/pause`, undefined, 204);
      const sent = await sendMany(
        `${api.url}/api/webhook/${MEASURED_SOURCE}`,
        context.body,
        n,
        context.connections,
        phaseLimitMs(n),
      );
      if (sent.ok !== n) throw new Error(`filling: ${sent.ok} of ${n} deliveries answered 200 (${sent.firstProblem ?? ''})`);
      result.fill = { deliveries: sent.ok, seconds: sent.seconds };
      for (const name of [PUSH, PULL, FLOOR]) {
        const { pending } = await destinationCounts(api, name);
        if (pending !== n) throw new Error(`after filling, ${name} has ${pending} unsettled forwards, not ${n}`);
      }
    });
    context.settleDisk();

    await inPhase(context, destination.url, 'push', problems, async ({ server, api }) => {
      const received0 = await receivedBy(destination.url);
      const cpu0 = cpuSeconds(server.child.pid);
      const destination0 = destinationCpu();
      const started = performance.now();
      await call(api, 'POST', `/api/destinations/${PUSH}/resume`, undefined, 204);
      const arrived = await waitFor(async () => (await receivedBy(destination.url)) - received0 >= n, phaseLimitMs(n), 20);
      const settled = arrived && (await waitFor(async () => (await destinationCounts(api, PUSH)).pending === 0, 60_000, 20));
      const seconds = (performance.now() - started) / 1000;
      const cpu1 = cpuSeconds(server.child.pid);
      const destination1 = destinationCpu();
      const counts = await destinationCounts(api, PUSH);
      const received = (await receivedBy(destination.url)) - received0;
      if (!settled)
        problems.push(
          `forward drain (push): ${counts.pending} of ${n} still unsettled, ${received} received, after ${seconds.toFixed(0)} s`,
        );
      if (counts.failed > 0) problems.push(`forward drain (push): ${counts.failed} forwards failed`);
      checks.push(`push: ${n - counts.pending - counts.failed} succeeded, ${counts.failed} failed, ${received} received`);
      result.rows.push(
        row(
          'push (Reception, resumed)',
          n - counts.pending,
          seconds,
          perForwardUs(cpu0, cpu1, n),
          perForwardUs(destination0, destination1, n),
          'from the resume until the destination received every forward and none was unsettled',
        ),
      );
    });
    context.settleDisk();

    await inPhase(context, destination.url, 'pull', problems, async ({ server, api }) => {
      const cpu0 = cpuSeconds(server.child.pid);
      const pull = await pullDrain(api, {
        destination: PULL,
        expected: n,
        max: PULL_MAX,
        ackConcurrency: PULL_ACK_CONCURRENCY,
        timeoutMs: phaseLimitMs(n),
        serverCpu: () => cpuSeconds(server.child.pid),
      });
      const cpu1 = cpuSeconds(server.child.pid);
      result.pull = pull;
      const counts = await destinationCounts(api, PULL);
      if (pull.firstProblem !== undefined) problems.push(`forward drain (pull): ${pull.firstProblem}`);
      if (counts.pending > 0 || counts.failed > 0)
        problems.push(`forward drain (pull): ${counts.pending} unsettled and ${counts.failed} failed after the drain`);
      checks.push(`pull: ${pull.forwards} acknowledged, ${counts.pending} unsettled, ${counts.failed} failed`);
      const ackShare = pull.seconds > 0 ? Math.round((100 * pull.ackSeconds) / pull.seconds) : 0;
      result.rows.push(
        row(
          `pull (claim ${PULL_MAX}, ack each, ${PULL_ACK_CONCURRENCY} acks in flight)`,
          pull.forwards,
          pull.seconds,
          perForwardUs(cpu0, cpu1, pull.forwards),
          undefined,
          `${pull.claims} claims took ${pull.claimSeconds.toFixed(1)} s, the acks ${pull.ackSeconds.toFixed(1)} s (${ackShare} % of the time)`,
        ),
      );
    });
    context.settleDisk();

    const received0 = await receivedBy(destination.url);
    const destination0 = destinationCpu();
    const output = await runToEnd(process.execPath, [FLOOR_SCRIPT], phaseLimitMs(n), {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      FLOOR_DB: join(context.dir, 'data', 'reception.sqlite'),
      FLOOR_DESTINATION: FLOOR,
      FLOOR_URL: `${destination.url}/hook`,
      FLOOR_CONCURRENCY: String(FLOOR_CONCURRENCY),
      FLOOR_BATCH: String(FLOOR_BATCH),
    });
    const destination1 = destinationCpu();
    const line = output.split('\n').find((l) => l.startsWith('FLOOR_RESULT '));
    if (line === undefined) throw new Error(`the floor script printed no result:\n${output.slice(-1000)}`);
    const floor = JSON.parse(line.slice('FLOOR_RESULT '.length)) as {
      forwards: number;
      seconds: number;
      cpuSeconds: number;
      commits: number;
      failedPosts: number;
    };
    const received = (await receivedBy(destination.url)) - received0;
    if (floor.forwards !== n || received !== n)
      problems.push(`forward drain (floor): ${floor.forwards} marked done and ${received} received, of ${n}`);
    checks.push(`floor: ${floor.forwards} marked done, ${received} received`);
    result.rows.push(
      row(
        `floor script (${FLOOR_CONCURRENCY} POSTs in flight, ${FLOOR_BATCH} per commit)`,
        floor.forwards,
        floor.seconds,
        (floor.cpuSeconds * 1e6) / Math.max(1, floor.forwards),
        perForwardUs(destination0, destination1, floor.forwards),
        `read in position order, ${floor.commits} commits, ${floor.failedPosts} POSTs sent again; its CPU is the script's own`,
      ),
    );
  } finally {
    await stopChild(destination.child, 'SIGTERM', 5000);
    result.check = checks.join('; ');
  }
  return result;
}

function row(
  phase: string,
  forwards: number,
  seconds: number,
  cpuUsPerForward: number | undefined,
  destinationCpuUsPerForward: number | undefined,
  notes: string,
): DrainRow {
  return {
    phase,
    forwards,
    seconds,
    forwardsPerSecond: forwards / seconds,
    notes,
    ...(cpuUsPerForward === undefined ? {} : { cpuUsPerForward }),
    ...(destinationCpuUsPerForward === undefined ? {} : { destinationCpuUsPerForward }),
  };
}

const DESCRIPTION =
  'a backlog of forwards (stored while the push destination was paused) drained by a fresh server: ' +
  'pushed to a local destination that answers 204, pulled by a consumer, and by the floor script';

export const DRAIN_CASE: ForwardCase = { name: 'forward drain', description: DESCRIPTION, run: runDrain };
