import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_DATABASE_URL, benchSchema, dropBenchSchema, postgresUnavailable } from './postgres-schema.js';
import { destinationCounts, storedTotal } from './forward-api.js';
import { storedCount } from './stored-count.js';

/** What the load generator sends (the same bytes on every request). */
export interface LoadRequest {
  /** Path of the measured run. */
  path: string;
  /** Path of the warm-up run: a different source, so that the check below counts only measured requests. */
  warmupPath: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** Where a case may put its files, and what it may use to start. */
export interface CaseContext {
  /** A fresh, empty directory for this case alone. */
  dir: string;
  /** The API token Reception is started with. */
  token: string;
  /** Extra `node` flags (such as `--cpu-prof`) for the server under test. */
  nodeFlags: readonly string[];
}

export interface StartCommand {
  command: string;
  args: string[];
  /** The whole environment of the server (nothing is inherited but PATH). */
  env: Record<string, string>;
}

/**
 * One server to measure. The process must print a JSON line with
 * `"msg": "listening"` and a `url` on stdout once it accepts requests.
 */
export interface BenchCase {
  name: string;
  description: string;
  start(context: CaseContext): StartCommand;
  /** Overrides of the default request (a signed case sets its headers here). */
  request?: (base: LoadRequest) => LoadRequest;
  /**
   * How many deliveries the server stored for the measured path, read back
   * after the run to check it against the 2xx answers. Absent: no store.
   */
  storedCount?: (url: string, context: CaseContext) => Promise<number>;
  /** Another case's name: the report prints this case's ratios to it as well. */
  compareTo?: string;
  /** Why the case cannot run on this machine (it is then skipped, not failed). */
  unavailable?: () => Promise<string | undefined>;
  /** Readers of `/api/stream` that follow the inbox through the run, in a process of their own (bench/stream-readers.ts). */
  streamReaders?: number;
  /** Run only when BENCH_CASES names it (a prototype, not part of the recorded run). */
  optional?: boolean;
  /** Removes what the case created outside its directory, after its server stopped. */
  cleanup?: (context: CaseContext) => Promise<void>;
}

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const BARE_SERVER = fileURLToPath(new URL('./bare-server.js', import.meta.url));
export const REFERENCE_SERVER = fileURLToPath(new URL('./reference-server.js', import.meta.url));
const WRITER_PROTOTYPE = fileURLToPath(new URL('./writer-thread-prototype.js', import.meta.url));

/** The writer-thread prototype of issue 22 (bench/writer-thread-prototype.ts), committing on the event loop or in a worker. */
function writerPrototype(
  name: string,
  mode: 'inline' | 'thread',
  checkpoints: 'inline' | 'thread' = 'inline',
  schema: 'prototype' | 'reception' = 'prototype',
): BenchCase {
  const commit =
    schema === 'reception' ? "Reception's own commit (SqliteStore.append, one forward each)" : 'SQLite group commit (FULL)';
  return {
    name,
    description: `issue 22 part 2 prototype: node:http + JSON check + ${commit} ${mode === 'inline' ? 'on the event loop' : 'in a writer thread, one message per batch'}`,
    optional: true,
    start: ({ dir, nodeFlags }) => ({
      command: process.execPath,
      args: [...nodeFlags, WRITER_PROTOTYPE],
      env: {
        BARE_PORT: '0',
        BARE_HOST: '127.0.0.1',
        WRITER_MODE: mode,
        WRITER_CHECKPOINTS: checkpoints,
        WRITER_SCHEMA: schema,
        WRITER_DATA: `${dir}/data`,
      },
    }),
  };
}

/**
 * The `node` flags of `npm start` (package.json), so that the bench measures
 * Reception as users start it.
 */
export function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  // `exec node …`: the shell that npm runs the script in becomes node (so that npm's signals reach it).
  const words = pkg.scripts.start
    .trim()
    .split(/\s+/)
    .filter((word, index) => !(index === 0 && word === 'exec'));
  if (words[0] !== 'node') throw new Error(`npm start does not run node: ${pkg.scripts.start}`);
  return words.slice(1).filter((word) => word.startsWith('--'));
}

export const MEASURED_SOURCE = 'bench';
export const WARMUP_SOURCE = 'bench-warmup';

/** Reception as `npm start` runs it, its data in the case's directory, logging at info. */
export function receptionCommand({ dir, token, nodeFlags }: CaseContext, extraEnv: Record<string, string>): StartCommand {
  return {
    command: process.execPath,
    args: [...startFlags(), ...nodeFlags, MAIN],
    env: {
      RECEPTION_PORT: '0',
      RECEPTION_HOST: '127.0.0.1',
      RECEPTION_DATA: `${dir}/data`,
      RECEPTION_TOKEN: token,
      RECEPTION_LOG_LEVEL: 'info',
      ...extraEnv,
    },
  };
}

function reception(name: string, description: string, extraEnv: Record<string, string>): BenchCase {
  return {
    name,
    description,
    start: (context) => receptionCommand(context, extraEnv),
    storedCount: (url, { token }) => storedCount(url, token, MEASURED_SOURCE),
  };
}

const STRIPE_SECRET = 'whsec_bench_0123456789abcdef';

/**
 * Reception with a config file that verifies the measured source (and the
 * warm-up source) with the stripe scheme. The body is fixed, so one
 * `Stripe-Signature` computed at the start of the run serves every request;
 * the tolerance is a day so that a long run stays fresh. The body's event
 * `id` is renamed: Stripe's event id is a dedup key, and every request here
 * stands for a new event.
 */
function verifiedReception(name: string, description: string): BenchCase {
  const plain = reception(name, description, {});
  return {
    ...plain,
    start: (context) => {
      const command = plain.start(context);
      const verify = { scheme: 'stripe', secrets: [STRIPE_SECRET], toleranceSeconds: 86_400 };
      const configFile = join(context.dir, 'reception.json');
      writeFileSync(configFile, JSON.stringify({ sources: { [MEASURED_SOURCE]: { verify }, [WARMUP_SOURCE]: { verify } } }));
      return { ...command, env: { ...command.env, RECEPTION_CONFIG: configFile } };
    },
    request: (base) => {
      const text = base.body.toString('utf8');
      const body = Buffer.from(text.replace('"id":', '"ix":'));
      if (body.equals(base.body)) throw new Error('the bench body has no "id" to rename');
      const timestamp = Math.floor(Date.now() / 1000);
      const signature = createHmac('sha256', STRIPE_SECRET).update(`${timestamp}.`).update(body).digest('hex');
      return { ...base, body, headers: { ...base.headers, 'Stripe-Signature': `t=${timestamp},v1=${signature}` } };
    },
    compareTo: 'reception durability=full',
  };
}

/** The pull destination of the defaults case: forwards are written in the commit and wait there, nothing is sent. */
const DEFAULTS_DESTINATION = 'worker';

/**
 * Reception with what a user has on by default (issue 30 part 3): event
 * types, the search index and the traffic counts (all on without a config),
 * and one forwarding route, with a filter on the event type (all but
 * `ping`, which the bench never sends), from the
 * measured and the warm-up source to a pull destination. Pull, so that the
 * forward is written in each delivery's commit as any route's is, and no
 * sending competes with ingest for the CPU: what a forward costs on the wire
 * is the forwarding cases' business (bench/forward-*.ts).
 */
function receptionWithDefaults(name: string, description: string, plain = reception(name, description, {})): BenchCase {
  return {
    ...plain,
    start: (context) => {
      const command = plain.start(context);
      const forward = [{ to: DEFAULTS_DESTINATION, filter: { eventType: { $ne: 'ping' } } }];
      const configFile = join(context.dir, 'reception.json');
      writeFileSync(
        configFile,
        JSON.stringify({
          destinations: { [DEFAULTS_DESTINATION]: { pull: true } },
          sources: { [MEASURED_SOURCE]: { forward }, [WARMUP_SOURCE]: { forward } },
        }),
      );
      return { ...command, env: { ...command.env, RECEPTION_CONFIG: configFile } };
    },
    // The route must have taken every delivery: one pending forward per delivery stored, warm-up included.
    storedCount: async (url, { token }) => {
      const api = { url, token };
      const stored = await storedCount(url, token, MEASURED_SOURCE);
      const [total, { pending }] = await Promise.all([storedTotal(api), destinationCounts(api, DEFAULTS_DESTINATION)]);
      if (pending !== total)
        throw new Error(`${total} deliveries stored but ${pending} forwards pending to ${DEFAULTS_DESTINATION}`);
      return stored;
    },
    compareTo: 'ref prototype FULL',
  };
}

/**
 * Reception on PostgreSQL (RECEPTION_DATABASE_URL) in a fresh schema,
 * dropped after the run: one instance, the default pool of 10 connections.
 */
function postgresReception(name: string, description: string): BenchCase {
  const plain = reception(name, description, {});
  return {
    ...plain,
    start: (context) => {
      const command = plain.start(context);
      return {
        ...command,
        env: { ...command.env, RECEPTION_DATABASE_URL: BENCH_DATABASE_URL, RECEPTION_DATABASE_SCHEMA: benchSchema(context.dir) },
      };
    },
    unavailable: postgresUnavailable,
    cleanup: ({ dir }) => dropBenchSchema(dir),
    compareTo: 'reception durability=full',
  };
}

/** One of the reference designs of `reference-server.ts`, in the case's own directory. */
function reference(name: string, description: string, mode: string, stream = false): BenchCase {
  return {
    name,
    description,
    start: ({ dir, nodeFlags }) => ({
      command: process.execPath,
      args: [...nodeFlags, REFERENCE_SERVER],
      env: {
        BARE_PORT: '0',
        BARE_HOST: '127.0.0.1',
        REFERENCE_MODE: mode,
        REFERENCE_DATA: `${dir}/data`,
        ...(stream ? { REFERENCE_STREAM: '1' } : {}),
      },
    }),
  };
}

/**
 * The cases of one run, in order. The first one is the baseline that the
 * others are compared to. Add a case here (a signed source, PostgreSQL)
 * and it is measured, checked and reported like the others.
 */
export const CASES: readonly BenchCase[] = [
  {
    name: 'bare node:http',
    description: 'node:http server that reads the whole body and answers 204: the ceiling for Node here',
    start: () => ({ command: process.execPath, args: [BARE_SERVER], env: { BARE_PORT: '0', BARE_HOST: '127.0.0.1' } }),
  },
  reference(
    'ref answer only',
    'node:http + JSON.parse + the 200 JSON answer, nothing stored: the ceiling for any receiver that answers as the contract says',
    'answer',
  ),
  {
    ...reference(
      'ref answer only, 100 stream readers',
      "the answer-only server that also serves GET /api/stream and writes each event loop turn's frames (one per delivery, the size and shape of Reception's) to every reader in one write: the floor of 100 live readers",
      'answer',
      true,
    ),
    streamReaders: 100,
    compareTo: 'ref answer only',
  },
  reference(
    'ref prototype FULL',
    "issue 2's prototype: node:http + JSON.parse + better-sqlite3 group commit, synchronous=FULL, no logs or metrics",
    'sqlite-full',
  ),
  reference('ref prototype NORMAL', 'the same prototype with synchronous=NORMAL', 'sqlite-normal'),
  {
    ...reception('reception durability=full', 'Reception, default durability (SQLite synchronous=FULL)', {}),
    compareTo: 'ref prototype FULL',
  },
  {
    ...reception('reception durability=relaxed', 'Reception, RECEPTION_DURABILITY=relaxed (SQLite synchronous=NORMAL)', {
      RECEPTION_DURABILITY: 'relaxed',
    }),
    compareTo: 'ref prototype NORMAL',
  },
  {
    ...reception(
      'reception durability=full, 100 stream readers',
      'Reception, default durability, while 100 readers follow GET /api/stream (a process of their own, under nice)',
      {},
    ),
    streamReaders: 100,
    compareTo: 'reception durability=full',
  },
  receptionWithDefaults(
    'reception defaults',
    'Reception, default durability, with event types, search, traffic counts and one filtered route to a pull destination',
  ),
  verifiedReception(
    'reception verified (stripe)',
    'Reception, default durability, source verified with the stripe scheme (RECEPTION_CONFIG)',
  ),
  postgresReception(
    'reception postgres',
    'Reception on PostgreSQL (RECEPTION_DATABASE_URL, a fresh schema), group commit under the append lock',
  ),
  receptionWithDefaults(
    'reception defaults on postgres',
    'the defaults case on PostgreSQL (a fresh schema)',
    postgresReception('reception defaults on postgres', 'the defaults case on PostgreSQL (a fresh schema)'),
  ),
  writerPrototype('proto writer on the event loop', 'inline'),
  { ...writerPrototype('proto writer thread', 'thread'), compareTo: 'proto writer on the event loop' },
  {
    ...writerPrototype('proto writer on the event loop, checkpoints in a thread', 'inline', 'thread'),
    compareTo: 'proto writer on the event loop',
  },
  // Issue 30: the same two with the commit Reception makes today (its schema, counts, one forward each).
  writerPrototype('proto writer on the event loop, reception commit', 'inline', 'inline', 'reception'),
  {
    ...writerPrototype('proto writer thread, reception commit', 'thread', 'inline', 'reception'),
    compareTo: 'proto writer on the event loop, reception commit',
  },
];
