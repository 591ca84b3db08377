import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MEASURED_SOURCE, receptionCommand, REFERENCE_SERVER, WARMUP_SOURCE, type StartCommand } from './cases.js';
import { call, destinationCounts, storedTotal, type Api } from './forward-api.js';
import type { LatencyResult } from './forward-latency.js';
import type { LoadGenerator, LoadResult } from './load.js';
import type { PullResult } from './pull-consumer.js';
import { startServer, type ServerUnderTest } from './server-process.js';
import type { TransformRunCost } from './transform-histogram.js';

/**
 * The forwarding cases (issue 18): Reception receiving, storing and
 * forwarding to a destination on this machine that answers 204 at once
 * (bench/forward-destination.ts, its own process), beside the cases that
 * only receive. Their runners are bench/forward-sustained.ts and
 * bench/forward-drain.ts; bench/forward-report.ts prints them.
 */

export const DESTINATION_SERVER = fileURLToPath(new URL('./forward-destination.js', import.meta.url));
export const FLOOR_SCRIPT = fileURLToPath(new URL('./forward-floor.js', import.meta.url));

/** The push destination, the pull destination, and the one the floor script drains (pull, so Reception never sends to it). */
export const PUSH = 'app';
export const PULL = 'worker';
export const FLOOR = 'floor';

export interface ForwardContext {
  /** A fresh directory for this case alone. */
  dir: string;
  token: string;
  /** With BENCH_CPU_PROF: where this case's servers write their profiles, one sub-directory each. */
  profileDir?: string;
  generator: LoadGenerator;
  connections: number;
  warmupSeconds: number;
  /** How long the sustained cases load the server. */
  seconds: number;
  /** How many deliveries (and so forwards per destination) the drain case creates. */
  drainForwards: number;
  body: Buffer;
  /** Writes the file system's dirty pages out between phases (run.ts `settle`). */
  settleDisk: () => void;
}

/** A reading of a forwarding server: what it stored, and its destination's unsettled and failed forwards. */
export interface Sample {
  /** Seconds since the measured window began. */
  at: number;
  stored: number;
  pending: number;
  failed: number;
  /** What the destination answered 204 so far. */
  received: number;
}

/** Forwards recorded `succeeded` (none is cancelled in the bench). */
export const succeeded = (s: Sample): number => s.stored - s.pending - s.failed;

export interface IngestOnly {
  /** Name of the case measured without forwarding in the same round. */
  name: string;
  requestsPerSecond: number;
  /** That case's server CPU per delivery, in µs. */
  cpuUsPerDelivery?: number;
}

export interface SustainedResult {
  kind: 'sustained';
  name: string;
  description: string;
  load?: LoadResult;
  samples: Sample[];
  forwardsPerSecond?: number;
  /** What the destination answered per second in the window: a cross-check of the store's count. */
  receivedPerSecond?: number;
  /** Change of the backlog (unsettled forwards) per second over the window. */
  backlogPerSecond?: number;
  /** After the load stopped: how long the rest of the backlog took to drain. */
  tailSeconds?: number;
  tailForwardsPerSecond?: number;
  serverCpuPercent?: number;
  /** Server CPU in the window per forward recorded `succeeded` in it (each also received and stored). */
  cpuUsPerForward?: number;
  destinationCpuPercent?: number;
  /** A case whose route has a transform: what its runs cost (from the server's metrics). */
  transformRun?: TransformRunCost;
  ingestOnly?: IngestOnly;
  check: string;
  error?: string;
}

export interface DrainRow {
  /** How the backlog was drained (push by Reception, pull consumer, floor script). */
  phase: string;
  forwards: number;
  seconds: number;
  forwardsPerSecond: number;
  /** CPU of the process that did the work (Reception's server, or the floor script) per forward, µs. */
  cpuUsPerForward?: number;
  destinationCpuUsPerForward?: number;
  notes: string;
}

export interface DrainResult {
  kind: 'drain';
  name: string;
  description: string;
  fill?: { deliveries: number; seconds: number };
  rows: DrainRow[];
  pull?: PullResult;
  ingestOnly?: IngestOnly;
  check: string;
  error?: string;
}

export type ForwardResult = SustainedResult | DrainResult | LatencyResult;

export interface ForwardCase {
  name: string;
  description: string;
  run(context: ForwardContext, problems: string[]): Promise<ForwardResult>;
}

/** The flags that make a server write a CPU profile into `profileDir/name`, when profiling. */
export function profileFlags(context: ForwardContext, name: string): string[] {
  return context.profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${join(context.profileDir, name)}`];
}

/** A fresh sub-directory of the case's directory, for one server's logs. */
export function subdir(context: ForwardContext, name: string): string {
  const dir = join(context.dir, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export async function startDestination(context: ForwardContext): Promise<ServerUnderTest> {
  return startServer(
    { command: process.execPath, args: [DESTINATION_SERVER], env: { BARE_PORT: '0', BARE_HOST: '127.0.0.1' } },
    subdir(context, 'destination'),
  );
}

/**
 * Reception with a config file whose sources forward everything: the
 * measured and warm-up sources to the push destination, and with
 * `drain`, the measured source to all three destinations. The push
 * destination has the default `concurrency` (10) unless one is given; it
 * is a broker instead of the HTTP destination when `broker` gives its settings.
 */
/** The name of the transform of `forward sustained transform`. */
const BENCH_TRANSFORM = 'bench-shape';

export function forwardingReception(
  context: ForwardContext,
  destinationUrl: string,
  drain: boolean,
  nodeFlags: string[],
  concurrency?: number,
  broker?: Record<string, unknown>,
  /** A transform's code for the measured and warm-up routes (CONTRACT 10); none when absent. */
  transform?: string,
): StartCommand {
  const route = transform === undefined ? { to: PUSH } : { to: PUSH, transform: BENCH_TRANSFORM };
  const push = {
    ...(broker ?? { url: `${destinationUrl}/hook`, allowPrivateNetwork: true }),
    ...(concurrency === undefined ? {} : { concurrency }),
  };
  const config = drain
    ? {
        destinations: { [PUSH]: push, [PULL]: { pull: true }, [FLOOR]: { pull: true } },
        sources: { [MEASURED_SOURCE]: { forward: [{ to: PUSH }, { to: PULL }, { to: FLOOR }] } },
      }
    : {
        destinations: { [PUSH]: push },
        ...(transform === undefined ? {} : { transforms: { [BENCH_TRANSFORM]: { code: transform } } }),
        sources: { [MEASURED_SOURCE]: { forward: [route] }, [WARMUP_SOURCE]: { forward: [route] } },
      };
  const file = join(context.dir, 'reception.json');
  writeFileSync(file, JSON.stringify(config));
  const command = receptionCommand({ dir: context.dir, token: context.token, nodeFlags }, { RECEPTION_CONFIG: file });
  return command;
}

/** Reception's counts through its API. */
export async function receptionCounts(api: Api): Promise<Omit<Sample, 'at' | 'received'>> {
  const [stored, counts] = await Promise.all([storedTotal(api), destinationCounts(api, PUSH)]);
  return { stored, ...counts };
}

/** The outbox floor's counts (`GET /stats` of bench/reference-server.ts). */
export async function referenceCounts(url: string): Promise<Omit<Sample, 'at' | 'received'>> {
  const stats = await call<{ stored: number; forwarded: number }>({ url, token: '' }, 'GET', '/stats');
  return { stored: stats.stored, pending: stats.stored - stats.forwarded, failed: 0 };
}

/** The outbox floor: the issue 2 prototype (FULL) with an outbox row per delivery, forwarded by a bare pump. */
export function referenceOutbox(
  context: ForwardContext,
  destinationUrl: string,
  nodeFlags: string[],
  concurrency = 10,
): StartCommand {
  return {
    command: process.execPath,
    args: [...nodeFlags, REFERENCE_SERVER],
    env: {
      BARE_PORT: '0',
      BARE_HOST: '127.0.0.1',
      REFERENCE_MODE: 'sqlite-full-outbox',
      REFERENCE_DATA: `${context.dir}/data`,
      REFERENCE_FORWARD_URL: `${destinationUrl}/hook`,
      REFERENCE_FORWARD_CONCURRENCY: String(concurrency),
    },
  };
}
