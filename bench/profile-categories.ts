import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The parts of a V8 `.cpuprofile` (written by `node --cpu-prof`) read here. */
interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string };
    children?: number[];
  }>;
  samples: number[];
  timeDeltas: number[];
}

interface Frame {
  name: string;
  url: string;
}

/** A share of the server's time, named by what the receiver does in it. */
interface Category {
  name: string;
  /** True when the sample belongs here, given its stack (the leaf first). */
  matches(stack: readonly Frame[]): boolean;
}

const anyFrame =
  (test: (frame: Frame) => boolean) =>
  (stack: readonly Frame[]): boolean =>
    stack.some(test);
const leaf =
  (test: (frame: Frame) => boolean) =>
  (stack: readonly Frame[]): boolean =>
    stack[0] !== undefined && test(stack[0]);
const inUrl =
  (...parts: string[]) =>
  (frame: Frame): boolean =>
    parts.some((part) => frame.url.includes(part));
const named =
  (...names: string[]) =>
  (frame: Frame): boolean =>
    names.includes(frame.name);

/**
 * The categories, in the order they are tried: a sample goes to the first
 * that matches. Work behind the commit (the search index, the stream) and
 * the log and metrics are recognized anywhere in the stack, so that their
 * SQLite reads and socket writes count as theirs; then the commit; then
 * the sample's own function.
 */
const CATEGORIES: readonly Category[] = [
  { name: '(idle)', matches: leaf(named('(idle)')) },
  { name: 'garbage collector', matches: leaf(named('(garbage collector)')) },
  {
    name: 'search index and type fill, behind the commit (sqlite-search, background-index)',
    matches: anyFrame(
      inUrl('/dist/src/search/sqlite-search.js', '/dist/src/search/background-index.js', '/dist/src/search/postgres-search.js'),
    ),
  },
  { name: 'stream wake-up and fan-out (src/stream)', matches: anyFrame(inUrl('/dist/src/stream/')) },
  {
    name: 'log line (pino, sonic-boom, log-destination)',
    matches: anyFrame(
      inUrl(
        '/pino/',
        '/sonic-boom/',
        '/pino-std-serializers/',
        '/observe/log-destination.js',
        '/observe/logger.js',
        '/receive/webhook-log.js',
      ),
    ),
  },
  { name: 'metrics (prom-client)', matches: anyFrame(inUrl('/prom-client/', '/observe/metrics.js')) },
  {
    name: 'SQLite transaction: BEGIN, COMMIT (WAL writes, fsync, checkpoints)',
    matches: leaf((frame) => frame.name === 'sqliteTransaction'),
  },
  {
    name: 'store append: inserts into the page cache, counts, outbox (sqlite-store, write-queue)',
    matches: anyFrame(
      inUrl(
        '/dist/src/inbox/sqlite-store.js',
        '/dist/src/inbox/write-queue.js',
        '/dist/src/forwarding/outbox/sqlite-',
        '/dist/src/traffic/sqlite-traffic.js',
      ),
    ),
  },
  {
    name: 'PostgreSQL client (pg, pg-protocol, postgres-store)',
    matches: anyFrame(inUrl('/pg/', '/pg-protocol/', '/pg-pool/', '/dist/src/platform/db/postgres/', '/postgres-')),
  },
  {
    name: 'HTTP answer (writeHead, socket writes)',
    matches: (stack) =>
      leaf(named('writev', 'writeLatin1String', 'writeUtf8String', 'writeBuffer'))(stack) ||
      anyFrame(inUrl('node:_http_outgoing'))(stack),
  },
  {
    name: 'JSON check (isUtf8, json-scan)',
    matches: anyFrame((f) => f.url.includes('/body/json-scan.js') || f.name === 'isUtf8'),
  },
  {
    name: 'event type read (json-strings, event-type)',
    matches: anyFrame(inUrl('/body/json-strings.js', '/dist/src/event-types/')),
  },
  {
    name: 'body read and copies (read-body, Buffer.concat, stream data events)',
    matches: (stack) =>
      anyFrame(inUrl('/body/read-body.js'))(stack) ||
      leaf((f) => f.name === 'concat' || f.name === 'copy' || f.name === '_copyActual' || f.name === 'copyImpl')(stack) ||
      leaf(inUrl('node:internal/streams/readable'))(stack),
  },
  {
    name: 'HTTP parse and socket reads (llhttp, _http_server, _http_common, net)',
    matches: (stack) =>
      leaf(
        inUrl('node:_http_server', 'node:_http_common', 'node:_http_incoming', 'node:net', 'node:internal/stream_base_commons'),
      )(stack) ||
      leaf(named('execute', 'onStreamRead', 'parserOnHeadersComplete', 'parserOnBody', 'parserOnMessageComplete'))(stack),
  },
  {
    name: 'forwarding routes: filter subject and match (routes, route-filter, sift)',
    matches: anyFrame(inUrl('/dist/src/forwarding/routes.js', '/dist/src/forwarding/route-filter.js', '/sift/')),
  },
  {
    name: 'receive code (receiver, webhook-handler, headers, ids, answer)',
    matches: leaf(
      inUrl(
        '/dist/src/receive/',
        '/dist/src/platform/http/header-list.js',
        '/dist/src/deliveries/delivery-id.js',
        '/dist/src/body/',
      ),
    ),
  },
  {
    name: 'promises, microtasks, timers (node:internal)',
    matches: leaf((f) => f.url.startsWith('node:internal/') || f.name === 'runMicrotasks'),
  },
  { name: '(program): native code with no JS frame (llhttp parsing, socket reads, V8)', matches: leaf(named('(program)')) },
];
const OTHER = 'other';

/**
 * Whether a profile is the main thread's: `node --cpu-prof` names each thread's file
 * `CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile`, the main thread being thread 0. A worker
 * (the checkpoint thread, the transform pool) has a profile of its own, whose waits would read as
 * the main thread's time.
 */
export function mainThreadProfile(name: string): boolean {
  return /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(name);
}

/** Milliseconds per category over the main thread's `.cpuprofile` files in `dir`, and the total sampled. */
export function categorize(dir: string): { totalMs: number; byCategory: Map<string, number> } {
  const byCategory = new Map<string, number>();
  let totalMs = 0;
  for (const file of readdirSync(dir).filter(mainThreadProfile)) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const parent = new Map<number, number>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    const frames = new Map(
      profile.nodes.map((node) => [node.id, { name: node.callFrame.functionName, url: node.callFrame.url }]),
    );
    const categoryOf = new Map<number, string>();
    const categorized = (id: number): string => {
      const known = categoryOf.get(id);
      if (known !== undefined) return known;
      const stack: Frame[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const frame = frames.get(at);
        if (frame !== undefined) stack.push(frame);
      }
      const name = CATEGORIES.find((category) => category.matches(stack))?.name ?? OTHER;
      categoryOf.set(id, name);
      return name;
    };
    profile.samples.forEach((id, index) => {
      const ms = (profile.timeDeltas[index + 1] ?? profile.timeDeltas[index] ?? 0) / 1000;
      totalMs += ms;
      const name = categorized(id);
      byCategory.set(name, (byCategory.get(name) ?? 0) + ms);
    });
  }
  return { totalMs, byCategory };
}

/**
 * A markdown table: each category's share of the samples and its time per
 * delivery (`deliveries` being those the server answered while profiled,
 * warm-up included), in µs, or in ms with `unit: 'ms'`.
 */
export function categoryTable(dir: string, deliveries: number, unit: 'µs' | 'ms'): string {
  const { totalMs, byCategory } = categorize(dir);
  const scale = unit === 'µs' ? 1000 : 1;
  const rows = [...byCategory.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(
      ([name, ms]) =>
        `| ${name} | ${((100 * ms) / totalMs).toFixed(1)} % | ${((ms * scale) / deliveries).toFixed(unit === 'µs' ? 1 : 2)} |`,
    );
  return [
    `${(totalMs / 1000).toFixed(1)} s sampled, ${deliveries} deliveries answered: ${((totalMs * scale) / deliveries).toFixed(unit === 'µs' ? 1 : 2)} ${unit} of the main thread's time per delivery (busy or idle)`,
    '',
    `| where | share | ${unit} per delivery |`,
    '|---|--:|--:|',
    ...rows,
    '',
  ].join('\n');
}
