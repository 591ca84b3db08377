import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { DEFAULT_REDACTED_HEADERS } from '../receive/headers.js';
import type { Durability } from '../store/sqlite/sqlite-store.js';
import { nearestWithin } from '../text/edit-distance.js';
import { parseDuration } from './duration.js';

/** Everything the process reads from its environment, validated. */
export interface Settings {
  port: number;
  host: string;
  dataDir: string;
  token: string | undefined;
  configFile: string | undefined;
  databaseUrl: string | undefined;
  /** PostgreSQL schema for Reception's tables. */
  databaseSchema: string;
  databasePoolSize: number;
  durability: Durability;
  /** Deliveries older than this many ms are pruned; undefined keeps them forever. */
  retentionMs: number | undefined;
  trustedProxies: string[];
  redactHeaders: string[];
  maxBodyBytes: number;
  logLevel: string;
  /** Time for a request's headers and body to arrive, in ms. */
  requestTimeoutMs: number;
  /** Time that in-flight requests get to finish on SIGTERM, in ms. */
  shutdownGraceMs: number;
  queueMaxPending: number;
  queueMaxPendingBytes: number;
  /** Bytes of webhook bodies held while they arrive, over all requests. */
  incomingMaxBytes: number;
  streamHeartbeatMs: number;
  streamMaxBufferedBytes: number;
  /** What a forward's lease adds to its destination's timeoutMs, in ms: how long a crashed instance's attempts stay its own. */
  forwardLeaseMarginMs: number;
  /** `RECEPTION_*` variables that nothing reads (a misspelt name), with the setting probably meant: warned of at start. */
  ignoredVariables: IgnoredVariable[];
}

export interface IgnoredVariable {
  name: string;
  /** The variable it probably misspells, if any (`nearestName`). */
  meant?: string;
}

export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'SettingsError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Reads `RECEPTION_*` variables; collects every problem and throws them together. */
export function loadSettings(env: Env = process.env): Settings {
  const problems: string[] = [];
  const known = new Set<string>(READ_ELSEWHERE);
  const read = (name: string): string | undefined => {
    known.add(name);
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const text = read(name);
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
      problems.push(`${name}: expected a whole number from ${min} to ${max}, got "${text}".`);
      return fallback;
    }
    return value;
  };
  const list = (name: string, fallback: readonly string[]): string[] => {
    known.add(name);
    const text = env[name];
    if (text === undefined) return [...fallback];
    return text.split(',').map((item) => item.trim()).filter((item) => item.length > 0);
  };

  const durabilityText = read('RECEPTION_DURABILITY') ?? 'full';
  if (durabilityText !== 'full' && durabilityText !== 'relaxed') {
    problems.push(`RECEPTION_DURABILITY: expected "full" or "relaxed", got "${durabilityText}".`);
  }
  const retentionText = read('RECEPTION_RETENTION');
  const retentionMs = retentionText === undefined ? undefined : parseDuration(retentionText);
  if (retentionText !== undefined && retentionMs === undefined) {
    problems.push(`RECEPTION_RETENTION: expected a duration such as "30d", "12h" or "90m", got "${retentionText}".`);
  }
  const databaseUrl = read('RECEPTION_DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('RECEPTION_DATABASE_URL: expected a URL that starts with postgres:// or postgresql://.');
  }
  const databaseSchema = read('RECEPTION_DATABASE_SCHEMA') ?? 'public';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(databaseSchema)) {
    problems.push(`RECEPTION_DATABASE_SCHEMA: expected a lower-case SQL identifier such as "reception", got "${databaseSchema}".`);
  }
  const token = read('RECEPTION_TOKEN');
  // Any length is accepted (a short one is warned about at start), but a
  // token with a space or a non-ASCII character could never be presented
  // in an `Authorization: Bearer` header.
  if (token !== undefined && !/^[\x21-\x7e]+$/.test(token)) {
    problems.push('RECEPTION_TOKEN: expected printable ASCII characters without spaces (or leave it unset to have one generated).');
  }
  const trustedProxies = list('RECEPTION_TRUSTED_PROXIES', []);
  for (const entry of trustedProxies) {
    if (!isAddressOrRange(entry)) {
      problems.push(`RECEPTION_TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range.`);
    }
  }
  const logLevel = read('RECEPTION_LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`RECEPTION_LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}, got "${logLevel}".`);
  }

  const settings: Omit<Settings, 'ignoredVariables'> = {
    port: integer('RECEPTION_PORT', 8080, 0, 65535),
    host: read('RECEPTION_HOST') ?? '127.0.0.1',
    dataDir: resolve(read('RECEPTION_DATA') ?? './data'),
    token,
    configFile: read('RECEPTION_CONFIG'),
    databaseUrl,
    databaseSchema,
    databasePoolSize: integer('RECEPTION_DATABASE_POOL', 10, 1, 1000),
    durability: durabilityText === 'relaxed' ? 'relaxed' : 'full',
    retentionMs,
    trustedProxies,
    redactHeaders: list('RECEPTION_REDACT_HEADERS', DEFAULT_REDACTED_HEADERS).map((h) => h.toLowerCase()),
    maxBodyBytes: integer('RECEPTION_MAX_BODY_BYTES', 5 * 1024 * 1024, 1, 1024 * 1024 * 1024),
    logLevel,
    requestTimeoutMs: integer('RECEPTION_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
    shutdownGraceMs: integer('RECEPTION_SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    queueMaxPending: integer('RECEPTION_QUEUE_MAX_PENDING', 10_000, 1, 1_000_000),
    queueMaxPendingBytes: integer('RECEPTION_QUEUE_MAX_BYTES', 256 * 1024 * 1024, 1024, 16 * 1024 * 1024 * 1024),
    incomingMaxBytes: integer('RECEPTION_INCOMING_MAX_BYTES', 256 * 1024 * 1024, 1024, 16 * 1024 * 1024 * 1024),
    // CONTRACT 3: a heartbeat at least every 15 s; 10 s by default leaves room for timer and event-loop lag.
    streamHeartbeatMs: integer('RECEPTION_STREAM_HEARTBEAT_MS', 10_000, 100, 15_000),
    streamMaxBufferedBytes: integer('RECEPTION_STREAM_BUFFER_BYTES', 8 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    // The dispatcher's DEFAULT_LEASE_MARGIN_MS (an app built without settings uses that one).
    forwardLeaseMarginMs: integer('RECEPTION_FORWARD_LEASE_MARGIN_MS', 30_000, 100, 3_600_000),
  };
  if (problems.length > 0) throw new SettingsError(problems);
  // Every setting above has read its variable: what is left in `env` is read by nothing.
  return { ...settings, ignoredVariables: ignoredVariables(env, known) };
}

/** `RECEPTION_*` variables that the command line reads (the server does not). */
const READ_ELSEWHERE = ['RECEPTION_URL'];
/** The project's own test and bench settings, never the server's. */
const PROJECT_PREFIXES = ['RECEPTION_TEST_', 'RECEPTION_BENCH_'];

/**
 * The known name that `name` probably misspells: the nearest within two
 * edits, else the only one that adds a suffix to it (`…_GRACE` for
 * `…_GRACE_MS`).
 */
function nearestName(name: string, known: ReadonlySet<string>): string | undefined {
  const near = nearestWithin(name, known, 2);
  if (near !== undefined) return near;
  const extended = [...known].filter((candidate) => candidate.startsWith(`${name}_`));
  return extended.length === 1 ? extended[0] : undefined;
}

/** The `RECEPTION_*` variables in `env` that no setting reads, each with the name probably meant. */
function ignoredVariables(env: Env, known: ReadonlySet<string>): IgnoredVariable[] {
  const ignored: IgnoredVariable[] = [];
  for (const name of Object.keys(env).sort()) {
    // Names are case-sensitive: `reception_port` is not RECEPTION_PORT, and is said so.
    const upper = name.toUpperCase();
    if (!upper.startsWith('RECEPTION_') || known.has(name) || PROJECT_PREFIXES.some((prefix) => upper.startsWith(prefix))) continue;
    const meant = nearestName(upper, known);
    ignored.push(meant === undefined ? { name } : { name, meant });
  }
  return ignored;
}

/** `10.0.0.1`, `10.0.0.0/8`, `::1`, `2001:db8::/32`: what `node:net` BlockList accepts. */
function isAddressOrRange(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0 || address.includes('%')) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128);
}
