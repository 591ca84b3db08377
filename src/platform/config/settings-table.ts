import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { DEFAULT_REDACTED_HEADERS } from '../http/header-list.js';
import type { Durability } from '../db/store-errors.js';
import { duration, durationOr, integer, list, mapped, oneOf, optionalText, text, type SettingKind } from './setting-kinds.js';

/** The server's settings, each read from one `RECEPTION_*` variable (or its `serve` flag). */
export interface SettingValues {
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
  /** Refusals kept per source, at most; 0 keeps none. */
  refusalsKeep: number;
  /** Refusals kept in all, at most. */
  refusalsKeepTotal: number;
  /** Refusals older than this many ms are pruned. */
  refusalsRetentionMs: number;
  maxBodyBytes: number;
  trustedProxies: string[];
  redactHeaders: string[];
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
  /** How long a push forward's lease lasts unless renewed, in ms: how long a crashed instance's attempts stay its own. */
  forwardLeaseMs: number;
  /** What the sources the config file does not name take: the contract's JSON objects and forms, or every body (for trying things out). */
  acceptAny: 'off' | 'on';
  logLevel: string;
  /** `auto`: short readable lines when stdout is a terminal, JSON otherwise. */
  logFormat: LogFormat;
}

export type LogFormat = 'auto' | 'json' | 'pretty';

/** One row of the settings table. */
export interface SettingSpec<T> {
  /** The environment variable. */
  env: `RECEPTION_${string}`;
  /** `reception serve --<flag>`, which wins over the variable. */
  flag: string;
  /** The value's placeholder in `--help`. */
  value: string;
  /** How the text is read and checked, with the default. */
  kind: SettingKind<T>;
  /** What an unset setting means, for one whose kind has no default ("generated", "keep forever"). */
  unset?: string;
  /** One line for `reception serve --help`. */
  help: string;
  /** The meaning column of the README's table (Markdown). */
  doc: string;
}

export type SettingsTable = { readonly [K in keyof SettingValues]: SettingSpec<SettingValues[K]> };

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Every setting of the server, in the order `--help` and the README list
 * them. `loadSettings`, `reception serve`'s flags and help, and the README's
 * table (test/unit/config/settings-table.test.ts compares it) all come from
 * here: a setting added here has its variable, its flag and its docs.
 */
export const SETTINGS: SettingsTable = {
  port: {
    env: 'RECEPTION_PORT',
    flag: 'port',
    value: 'N',
    kind: integer(8080, 0, 65535),
    help: 'Port to listen on; 0 picks a free one.',
    doc: 'port to listen on',
  },
  host: {
    env: 'RECEPTION_HOST',
    flag: 'host',
    value: 'ADDR',
    kind: text('127.0.0.1'),
    help: 'Address to listen on; 0.0.0.0 for every interface.',
    doc: 'address to listen on (`0.0.0.0` for every interface)',
  },
  dataDir: {
    env: 'RECEPTION_DATA',
    flag: 'data',
    value: 'DIR',
    kind: mapped(text('./data'), (dir) => resolve(dir)),
    help: 'Data directory: the SQLite database and the generated token.',
    doc: 'data directory: the SQLite database and the generated token. A new directory and database are readable by the user that runs Reception only (0700, 0600); an existing database or token file that others can read is warned of at start (its directory is left as it is)',
  },
  token: {
    env: 'RECEPTION_TOKEN',
    flag: 'token',
    value: 'TOKEN',
    unset: 'generated',
    // Any length is accepted (a short one is warned about at start), but a
    // token with a space or a non-ASCII character could never be presented
    // in an `Authorization: Bearer` header. The message never repeats it.
    kind: optionalText((token) =>
      /^[\x21-\x7e]+$/.test(token)
        ? undefined
        : 'expected printable ASCII characters without spaces (or leave it unset to have one generated).',
    ),
    help: 'API token for reading, printable ASCII without spaces; under 16 characters it is accepted with a warning. Unset, one is generated once and kept in the data directory. Prefer the variable: flags show in `ps`.',
    doc: 'API token for reading: printable ASCII, no spaces; a token shorter than 16 characters is accepted with a warning in the log',
  },
  configFile: {
    env: 'RECEPTION_CONFIG',
    flag: 'config',
    value: 'FILE',
    kind: optionalText(),
    unset: 'none',
    help: 'Config file (YAML or JSON): per-source rules and forwarding destinations; SIGHUP reloads it.',
    doc: 'the config file (YAML or JSON): per-source rules and forwarding destinations, see docs/config.md; `SIGHUP` reloads it',
  },
  databaseUrl: {
    env: 'RECEPTION_DATABASE_URL',
    flag: 'database-url',
    value: 'URL',
    unset: 'none: SQLite',
    // The message never repeats the URL: it may hold a password.
    kind: optionalText((url) =>
      /^postgres(ql)?:\/\//.test(url) ? undefined : 'expected a URL that starts with postgres:// or postgresql://.',
    ),
    help: 'postgres:// URL: PostgreSQL instead of SQLite, so several instances share one inbox.',
    doc: '`postgres://…`: keep the inbox in PostgreSQL, see docs/postgresql.md',
  },
  databaseSchema: {
    env: 'RECEPTION_DATABASE_SCHEMA',
    flag: 'database-schema',
    value: 'NAME',
    kind: text('public', (schema) =>
      /^[a-z_][a-z0-9_]{0,62}$/.test(schema)
        ? undefined
        : `expected a lower-case SQL identifier such as "reception", got "${schema}".`,
    ),
    help: 'PostgreSQL schema for the tables.',
    doc: "the PostgreSQL schema for Reception's tables (created if missing)",
  },
  databasePoolSize: {
    env: 'RECEPTION_DATABASE_POOL',
    flag: 'database-pool',
    value: 'N',
    kind: integer(10, 1, 1000),
    help: 'PostgreSQL connections.',
    doc: 'PostgreSQL connections per instance (plus one for `LISTEN`)',
  },
  durability: {
    env: 'RECEPTION_DURABILITY',
    flag: 'durability',
    value: 'full|relaxed',
    kind: oneOf(['full', 'relaxed'], 'full'),
    help: 'full: every commit survives power loss; relaxed: a crash of Reception only.',
    doc: '`full` or `relaxed`, see docs/durability.md',
  },
  retentionMs: {
    env: 'RECEPTION_RETENTION',
    flag: 'retention',
    value: 'DURATION',
    kind: duration(),
    unset: 'keep forever',
    help: 'Delete deliveries older than this, e.g. 30d, 12h.',
    doc: 'delete deliveries older than this: a whole number and a unit (`ms`, `s`, `m`, `h`, `d`, `w`), e.g. `30d`, `12h`, `90m`, `2w`',
  },
  refusalsKeep: {
    env: 'RECEPTION_REFUSALS_KEEP',
    flag: 'refusals-keep',
    value: 'N',
    kind: integer(10_000, 0, 1_000_000),
    help: 'Refused webhook requests kept per source (the newest); 0 keeps none.',
    doc: 'refused webhook requests kept per source, the newest (`GET /api/refusals`, see "Why didn\'t my webhook arrive?"); names that are not valid count as one source; `0` keeps none',
  },
  refusalsKeepTotal: {
    env: 'RECEPTION_REFUSALS_KEEP_TOTAL',
    flag: 'refusals-keep-total',
    value: 'N',
    kind: integer(100_000, 1, 100_000_000),
    help: 'Refused webhook requests kept in all, over every source (the newest).',
    doc: 'refused webhook requests kept in all, the newest: the bound that holds when a flood names many sources',
  },
  refusalsRetentionMs: {
    env: 'RECEPTION_REFUSALS_RETENTION',
    flag: 'refusals-retention',
    value: 'DURATION',
    kind: durationOr('7d'),
    help: 'Delete refused requests older than this, e.g. 7d, 12h.',
    doc: 'delete refused requests older than this (a duration as for `RECEPTION_RETENTION`)',
  },
  maxBodyBytes: {
    env: 'RECEPTION_MAX_BODY_BYTES',
    flag: 'max-body-bytes',
    value: 'N',
    kind: integer(5 * 1024 * 1024, 1, 1024 * 1024 * 1024),
    help: 'Largest body accepted.',
    doc: 'largest body accepted',
  },
  trustedProxies: {
    env: 'RECEPTION_TRUSTED_PROXIES',
    flag: 'trusted-proxies',
    value: 'LIST',
    unset: 'none',
    kind: list([], (entry) => (isAddressOrRange(entry) ? undefined : `"${entry}" is not an IP address or CIDR range.`)),
    help: 'Comma-separated addresses or CIDR ranges allowed to set X-Forwarded-For and X-Forwarded-Proto.',
    doc: "comma-separated addresses or CIDR ranges allowed to set `X-Forwarded-For` (the client's address) and `X-Forwarded-Proto` (its last value `https` makes the login cookie `Secure`)",
  },
  redactHeaders: {
    env: 'RECEPTION_REDACT_HEADERS',
    flag: 'redact-headers',
    value: 'LIST',
    kind: mapped(list(DEFAULT_REDACTED_HEADERS), (names) => names.map((name) => name.toLowerCase())),
    help: 'Header values replaced by [redacted] before storing; the list replaces the default one, and an empty one keeps every value.',
    doc: 'header values replaced by `[redacted]` before storing. The list replaces the default one: to add `x-api-key`, set `authorization,cookie,proxy-authorization,x-api-key`. Empty keeps every value',
  },
  requestTimeoutMs: {
    env: 'RECEPTION_REQUEST_TIMEOUT_MS',
    flag: 'request-timeout-ms',
    value: 'MS',
    kind: integer(30_000, 100, 600_000),
    help: "Time for a request's headers and body to arrive.",
    doc: "time for a request's headers and body to arrive; then `408` or the connection is closed",
  },
  shutdownGraceMs: {
    env: 'RECEPTION_SHUTDOWN_GRACE_MS',
    flag: 'shutdown-grace-ms',
    value: 'MS',
    kind: integer(10_000, 0, 600_000),
    help: 'Time requests in flight get to finish on SIGTERM.',
    doc: 'time requests in flight get to finish on SIGTERM',
  },
  queueMaxPending: {
    env: 'RECEPTION_QUEUE_MAX_PENDING',
    flag: 'queue-max-pending',
    value: 'N',
    kind: integer(10_000, 1, 1_000_000),
    help: 'Deliveries waiting for a commit before new ones get 503.',
    doc: 'deliveries waiting for a commit before new ones get `503`',
  },
  queueMaxPendingBytes: {
    env: 'RECEPTION_QUEUE_MAX_BYTES',
    flag: 'queue-max-bytes',
    value: 'N',
    kind: integer(256 * 1024 * 1024, 1024, 16 * 1024 * 1024 * 1024),
    help: 'Body bytes waiting for a commit before new ones get 503.',
    doc: 'body bytes waiting for a commit before new ones get `503`',
  },
  incomingMaxBytes: {
    env: 'RECEPTION_INCOMING_MAX_BYTES',
    flag: 'incoming-max-bytes',
    value: 'N',
    kind: integer(256 * 1024 * 1024, 1024, 16 * 1024 * 1024 * 1024),
    help: 'Body bytes held while they arrive, over all requests together, before a new body gets 503.',
    doc: 'body bytes held while they arrive, over all requests together: a body that finds them spent gets `503` and `Retry-After` (a body is always let through while it is the only one arriving), so that many senders that each send all but the last byte of 5 MiB cannot fill the memory',
  },
  streamHeartbeatMs: {
    // CONTRACT 3: a heartbeat at least every 15 s; 10 s by default leaves room for timer and event-loop lag.
    env: 'RECEPTION_STREAM_HEARTBEAT_MS',
    flag: 'stream-heartbeat-ms',
    value: 'MS',
    kind: integer(10_000, 100, 15_000),
    help: 'Time between heartbeat comments on /api/stream, at most 15000.',
    doc: "time between heartbeat comments on `/api/stream` (at most 15000, the contract's bound)",
  },
  streamMaxBufferedBytes: {
    env: 'RECEPTION_STREAM_BUFFER_BYTES',
    flag: 'stream-buffer-bytes',
    value: 'N',
    kind: integer(8 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    help: 'Bytes a stream client may leave unread; past that, taking none of them for a heartbeat interval disconnects it.',
    doc: 'bytes a stream client may leave unread; past that, taking none of them for a heartbeat interval disconnects it',
  },
  forwardLeaseMs: {
    // The LeaseKeeper's DEFAULT_LEASE_MS (an app built without settings uses that one).
    env: 'RECEPTION_FORWARD_LEASE_MS',
    flag: 'forward-lease-ms',
    value: 'MS',
    kind: integer(10_000, 1_000, 12_000),
    help: "How long a push forward's lease lasts unless renewed (every third of it); the forwards of a crashed instance are sent again within it.",
    doc: "how long the lease of a forward being pushed lasts unless renewed (1000 to 12000): each instance renews its leases every third of it while it lives, so the forwards of an instance that crashed are attempted again by another instance, or the restarted one, within this and a second (the contract's 15 s). Shorter takes over sooner; renewals that fail for nearly this long make forwards go back unattempted",
  },
  acceptAny: {
    env: 'RECEPTION_ACCEPT_ANY',
    flag: 'accept-any',
    value: 'on|off',
    kind: oneOf(['off', 'on'] as const, 'off'),
    help: 'on: sources the config file does not name take every body (any content type, any JSON), for trying things out.',
    doc: '`on`: every source that the config file does not name takes every body, of any content type or none, and any JSON value (as `accept: [json, form, multipart, text, xml, any]` with `anyJson: true` would), so that a first try needs no config file; a source the file names keeps its own rules. `off` (the default, and what production wants): such sources take JSON objects and forms, and answer `415` to the rest with what to add to the config file',
  },
  logLevel: {
    env: 'RECEPTION_LOG_LEVEL',
    flag: 'log-level',
    value: 'LEVEL',
    kind: oneOf(LOG_LEVELS, 'info'),
    help: 'fatal, error, warn, info, debug, trace or silent.',
    doc: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`',
  },
  logFormat: {
    env: 'RECEPTION_LOG_FORMAT',
    flag: 'log-format',
    value: 'FORMAT',
    kind: oneOf(['auto', 'json', 'pretty'] as const, 'auto'),
    help: 'auto (short readable lines on a terminal, JSON otherwise), json or pretty.',
    doc: '`json`: one JSON object per line (for log collectors); `pretty`: one short line per entry (time, status, source, event type, size, id for a webhook; colours when stdout is a terminal and `NO_COLOR` is unset); `auto`: `pretty` when stdout is a terminal, else `json`',
  },
};

/** The default as `--help` and the README say it: the value, or what unset means. */
export function shownDefault(spec: SettingSpec<unknown>): { value: string } | { text: string } {
  return spec.kind.fallback === undefined ? { text: spec.unset ?? 'none' } : { value: spec.kind.fallback };
}

/** `10.0.0.1`, `10.0.0.0/8`, `::1`, `2001:db8::/32`: what `node:net` BlockList accepts. */
function isAddressOrRange(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0 || address.includes('%')) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128);
}
