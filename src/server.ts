import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildApp, type App } from './app.js';
import { resolveToken, TOKEN_FILE, tokenFileWarning, type ResolvedToken } from './platform/auth/token.js';
import type { Settings } from './platform/config/settings.js';
import { dataDirProblem, listenProblem } from './platform/config/start-error.js';
import { loadConfigFileChecked } from './config/source-config.js';
import { transformDefinitions, transformUsers } from './config/transform-config.js';
import type { TransformDefinition, TransformUser } from './transforms/transforms.js';
import type { ConfigFile } from './config/source-config-schema.js';
import { LatestReads, readConfigFileOffThread } from './config/config-reader.js';
import { SourceRules } from './receive/source-rules.js';
import { budgetOf, resolveDestinations, RETRY_DEFAULTS, type Destination } from './forwarding/destination.js';
import { privateDestinationWarnings } from './forwarding/private-destination-warnings.js';
import { createLogger, LogDestination, type Logger } from './platform/observe/logger.js';
import { Metrics } from './platform/observe/metrics.js';
import { prettyLine } from './platform/observe/pretty-log.js';
import { RetentionPruner } from './inbox/retention-pruner.js';
import type { InboxDatabase } from './inbox/inbox-database.js';
import { describeServer, PostgresStore } from './inbox/postgres-store.js';
import { permissionWarning } from './platform/db/sqlite/open-database.js';
import type { DeadLetter } from './forwarding/outbox/dead-letters.js';
import { SqliteStore } from './inbox/sqlite-store.js';
import { PostgresCommitFeed } from './stream/postgres-commit-feed.js';
import { resolveAlerts, type Alerts } from './alerts/alerts.js';

/** Below this length the token is accepted with a warning. */
const SHORT_TOKEN = 16;

/** What the steps of a start share: the settings and the log. */
interface Start {
  settings: Settings;
  logger: Logger;
}

/**
 * Starts Reception, step by step: the log, the data directory, the store
 * and its commit feed, the API token, the config file (reloaded on
 * SIGHUP), the app, the retention pruner, the signals that shut it down,
 * then listen and say where. Resolves once it listens.
 */
export async function startServer(settings: Settings): Promise<void> {
  const logDestination = new LogDestination(undefined, logTransform(settings));
  const start: Start = { settings, logger: createLogger(settings.logLevel, logDestination) };
  warnIgnoredVariables(start);
  prepareDataDir(settings);
  const store = await openStore(start);
  const feed = await startCommitFeed(start, store);
  const apiToken = resolveApiToken(start);
  const metrics = new Metrics();
  const config = await loadConfig(settings);
  logConfig(start, config, 'config loaded');
  if (settings.acceptAny === 'on') {
    start.logger.warn(
      'RECEPTION_ACCEPT_ANY=on: sources the config file does not name take every body and any JSON; for trying things out, not for production',
    );
  }
  const interrupted = releaseInterrupted(start, store, config.destinations);
  const app = await buildApp({
    ...settings,
    ...config,
    store,
    token: apiToken.token,
    logger: start.logger,
    metrics,
    ...(feed === undefined ? {} : { feed }),
  });
  // Forwards the recovery failed (their interrupted attempt spent the budget) are dead letters too (docs/alerts.md).
  app.forwardIssues.failed(interrupted);
  reloadConfigOnSighup(start, app, metrics);
  // Refusals always have a retention (7 days unless set); deliveries only when RECEPTION_RETENTION is.
  const pruner = new RetentionPruner({
    store,
    ...(settings.retentionMs === undefined ? {} : { retentionMs: settings.retentionMs }),
    refusalRetentionMs: settings.refusalsRetentionMs,
    logger: start.logger,
    metrics,
  });
  shutDownOnSignals(start, { app, store, feed, pruner, logDestination });
  const base = await listen(settings, app, apiToken);
  start.logger.info(
    { url: base, pid: process.pid, ...storeDescription(settings), retention: retentionText(settings) },
    'listening',
  );
  pruner.start();
  showAddress(base);
  if (apiToken.generated) showGeneratedToken(apiToken, base);
}

/**
 * What the `listening` line says of the store: SQLite's file and the
 * durability setting that applies to it; for PostgreSQL, which server,
 * database and schema (no password), and no durability: there PostgreSQL's
 * own `synchronous_commit` decides what survives a power loss.
 */
function storeDescription(settings: Settings): Record<string, string> {
  if (settings.databaseUrl !== undefined) {
    return {
      store: 'postgres',
      database: describeServer(settings.databaseUrl),
      schema: settings.databaseSchema,
      durability: "PostgreSQL's synchronous_commit",
    };
  }
  return { store: 'sqlite', durability: settings.durability, dataDir: settings.dataDir };
}

/**
 * Where to open the page, for the person who started Reception: one line on
 * stderr, with a loopback address when it listens on every interface (a
 * browser cannot open 0.0.0.0 everywhere).
 */
function showAddress(base: string): void {
  const url = new URL(base);
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  if (url.hostname === '[::]') url.hostname = '[::1]';
  const page = url.origin;
  process.stderr.write(
    `Reception is ready. The inbox page: ${page}/  API docs: ${page}/docs  Webhooks: POST ${page}/api/webhook/<source>\n`,
  );
}

/** Short lines for a person at a terminal (`RECEPTION_LOG_FORMAT`, auto: when stdout is one), else JSON as pino writes it. */
function logTransform(settings: Settings): ((line: string) => string) | undefined {
  const pretty = settings.logFormat === 'pretty' || (settings.logFormat === 'auto' && process.stdout.isTTY === true);
  if (!pretty) return undefined;
  const color = process.stdout.isTTY === true && (process.env.NO_COLOR ?? '') === '';
  return (line) => prettyLine(line, { color });
}

/** `RECEPTION_*` variables that nothing reads: each is warned of, with the name probably meant. */
function warnIgnoredVariables({ settings, logger }: Start): void {
  for (const { name, meant } of settings.ignoredVariables) {
    logger.warn(
      { variable: name, ...(meant === undefined ? {} : { meant }) },
      `${name} is not a Reception setting and is ignored${meant === undefined ? '' : `: did you mean ${meant}?`}`,
    );
  }
}

/**
 * SQLite keeps the inbox in the data directory, and a generated token lives
 * there on any store (a PostgreSQL instance that only reads its saved token
 * needs no more): then the directory must exist and be writable.
 */
function prepareDataDir(settings: Settings): void {
  if (settings.databaseUrl === undefined || (settings.token === undefined && !existsSync(join(settings.dataDir, TOKEN_FILE)))) {
    checkDataDir(settings.dataDir);
  }
}

/** PostgreSQL's commit feed (LISTEN/NOTIFY), so that every instance's streams hear every commit; none on SQLite. */
async function startCommitFeed({ settings, logger }: Start, store: InboxDatabase): Promise<PostgresCommitFeed | undefined> {
  if (settings.databaseUrl === undefined || !(store instanceof PostgresStore)) return undefined;
  const feed = new PostgresCommitFeed(settings.databaseUrl, store.channel, logger);
  await feed.start();
  return feed;
}

/** The API token (given, kept or generated), with warnings for a token file others can read and for a short token. */
function resolveApiToken({ settings, logger }: Start): ResolvedToken {
  const resolved = resolveToken(settings.token, settings.dataDir);
  const fileWarning = resolved.file === undefined ? undefined : tokenFileWarning(resolved.file);
  if (fileWarning !== undefined) logger.warn(fileWarning);
  if (resolved.token.length < SHORT_TOKEN) {
    // Accepted (CONTRACT 3 sets no length), but said out loud: a short token is easy to guess.
    logger.warn(
      { tokenLength: resolved.token.length },
      `RECEPTION_TOKEN is shorter than ${SHORT_TOKEN} characters: anyone who guesses it can read and delete the inbox; unset it to have a long one generated`,
    );
  }
  return resolved;
}

interface LoadedConfig {
  rules: SourceRules;
  destinations: Map<string, Destination>;
  transforms: { definitions: TransformDefinition[]; users: Map<string, TransformUser[]> };
  alerts: Alerts;
}

/** The source rules, destinations and transforms of the config file, read at start; the defaults without one. */
async function loadConfig(settings: Settings): Promise<LoadedConfig> {
  return builtConfig(settings, settings.configFile === undefined ? undefined : await loadConfigFileChecked(settings.configFile));
}

/** The source rules and destinations of a validated config file. */
function builtConfig(settings: Settings, config: ConfigFile | undefined): LoadedConfig {
  return {
    rules: SourceRules.fromConfig(config, { maxBodyBytes: settings.maxBodyBytes, anyJson: false }, settings.acceptAny === 'on'),
    destinations: resolveDestinations(config?.destinations),
    transforms: { definitions: transformDefinitions(config), users: transformUsers(config) },
    alerts: resolveAlerts(config?.alerts),
  };
}

/** The `config loaded` (or `config reloaded`) line: what the file names, and whether strict mode is on. */
function logConfig(
  { settings, logger }: Start,
  { rules, destinations, transforms, alerts }: LoadedConfig,
  message: string,
): void {
  if (settings.configFile === undefined) return;
  logger.info(
    {
      file: settings.configFile,
      sources: rules.configuredSources.length,
      destinations: destinations.size,
      ...(transforms.definitions.length === 0
        ? {}
        : { transforms: transforms.definitions.map(({ name, version }) => `${name}@${version}`) }),
      ...(alerts.notify.length === 0 ? {} : { notify: alerts.notify.map((target) => target.destination) }),
      strict: rules.strict,
    },
    message,
  );
  // What the private-network guard will refuse every time (CONTRACT 6), said before the first forward fails.
  for (const { destination, host, message: why } of privateDestinationWarnings(destinations.values()))
    logger.warn({ destination, host, setting: 'allowPrivateNetwork' }, why);
}

/**
 * On SQLite, before forwarding starts (CONTRACT 6 "After a crash"): one
 * process owns the inbox, so every forward still `delivering` was caught by
 * the end of the last one, and is attempted again at once rather than when
 * its lease would have run out. PostgreSQL's instances take over the leases
 * of one that stopped renewing them instead.
 */
function releaseInterrupted(
  { logger }: Start,
  store: InboxDatabase,
  destinations: ReadonlyMap<string, Destination>,
): DeadLetter[] {
  if (!(store instanceof SqliteStore)) return [];
  // Told before the app (and its issues) exists: kept here, and counted once it does.
  const failed: DeadLetter[] = [];
  const stopListening = store.outbox.onDeadLetters((letters) => failed.push(...letters));
  const released = store.outbox.releaseInterrupted(Date.now(), (name) => {
    const destination = destinations.get(name);
    return destination === undefined
      ? { attempts: RETRY_DEFAULTS.attempts, maxAgeMs: RETRY_DEFAULTS.maxAgeSeconds * 1000 }
      : budgetOf(destination);
  });
  stopListening();
  if (released > 0)
    logger.warn(
      { forwards: released, failed: failed.length },
      'forwards caught mid-attempt when Reception last stopped are attempted again (or failed, when that attempt spent their budget)',
    );
  return failed;
}

/**
 * SIGHUP reads the config file again; a file that does not load is refused
 * and the previous config stays in force. The file is read, parsed and
 * validated on a thread of its own (a large one takes seconds), so requests
 * are answered meanwhile; only building the rules from it runs here. A
 * SIGHUP during a read stops that read: the file as the last SIGHUP found it
 * wins, and an older read is never applied after it.
 */
function reloadConfigOnSighup(start: Start, app: App, metrics: Metrics): void {
  const { settings, logger } = start;
  const file = settings.configFile;
  if (file === undefined) {
    process.on('SIGHUP', () => logger.info('SIGHUP: there is no config file (RECEPTION_CONFIG) to reload'));
    return;
  }
  const refused = (error: unknown): void => {
    metrics.configReloads.inc({ result: 'refused' });
    logger.error(
      { file, problem: error instanceof Error ? error.message : String(error) },
      'config reload refused: the previous config stays in force',
    );
  };
  const reads = new LatestReads(
    () => readConfigFileOffThread(file),
    (outcome) => {
      if (outcome.status === 'rejected') return refused(outcome.reason);
      try {
        const loaded = builtConfig(settings, outcome.value);
        app.setRules(loaded.rules);
        app.forwarder.apply(loaded.destinations);
        app.setAlerts(loaded.alerts);
        // Runs under way finish on the version they began with; the next ones take the new code (CONTRACT 10).
        app.transforms.apply(loaded.transforms.definitions, loaded.transforms.users);
        metrics.configReloads.inc({ result: 'ok' });
        logConfig(start, loaded, 'config reloaded');
      } catch (error) {
        refused(error);
      }
    },
  );
  process.on('SIGHUP', () => {
    if (reads.start()) logger.info({ file }, 'SIGHUP again before the reload finished: the file is read again');
  });
}

/** What shutdown stops, in its order. */
interface Running {
  app: App;
  store: InboxDatabase;
  feed: PostgresCommitFeed | undefined;
  pruner: RetentionPruner;
  logDestination: LogDestination;
}

/**
 * SIGTERM and SIGINT (once, whichever comes first): stop accepting, give
 * requests and forwarding attempts in flight the grace period, then drain
 * the write queue, close the store and exit (1 when the queue did not drain).
 */
function shutDownOnSignals({ settings, logger }: Start, { app, store, feed, pruner, logDestination }: Running): void {
  let shuttingDown = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal, graceMs: settings.shutdownGraceMs }, 'shutting down: answering requests in flight');
    app.beginClosing();
    // Attempts in flight get the same grace as requests in flight; then they are aborted and recorded, to be retried.
    const forwardingStopped = app.forwarder.stop(settings.shutdownGraceMs);
    const closed = new Promise<void>((resolve) => app.server.close(() => resolve()));
    app.server.closeIdleConnections();
    const grace = setTimeout(() => {
      logger.warn('grace period over: closing the connections still open');
      app.server.closeAllConnections();
    }, settings.shutdownGraceMs);
    await closed;
    clearTimeout(grace);
    await pruner.stop();
    await app.forwardIssues.stop();
    // The refusals buffered are written (one try, bounded by the store) before it closes.
    await within(app.refusals.stop(), STORE_GIVE_UP_MS);
    // The store bounds each commit (PostgreSQL: its query timeout), so the
    // queue drains; these bounds are for a store that stopped answering
    // altogether, so that the process still ends.
    const drained = await within(app.queue.drain(), STORE_GIVE_UP_MS);
    await within(forwardingStopped, STORE_GIVE_UP_MS);
    await within(app.index.stop(), STORE_GIVE_UP_MS);
    // The issue signals gathered are written (one try) before the store closes.
    await within(app.issues.stop(), STORE_GIVE_UP_MS);
    await feed?.stop();
    const closedStore = await within(store.close(), STORE_CLOSE_MS);
    if (!drained || !closedStore) {
      logger.error({ drained, closedStore }, 'stopped without finishing: the store did not answer');
    } else {
      logger.info('stopped');
    }
    await logDestination.end();
    process.exit(drained ? 0 : 1);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** Listens on the settings' host and port; resolves with the base URL (the port the system chose for port 0). */
async function listen(settings: Settings, app: App, { generated, file }: ResolvedToken): Promise<string> {
  try {
    await new Promise<void>((resolve, reject) => {
      app.server.once('error', reject);
      app.server.listen(settings.port, settings.host, () => resolve());
    });
  } catch (error) {
    // A token generated by this start was never shown: take it back, so
    // that the next start generates and prints one.
    if (generated && file !== undefined) rmSync(file, { force: true });
    throw listenProblem(error, settings.host, settings.port);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : settings.port;
  return `http://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${port}`;
}

/** The retention in force, as the `listening` line says it. */
function retentionText(settings: Settings): string {
  return settings.retentionMs === undefined ? 'none: kept until deleted' : `${settings.retentionMs / 3_600_000} h`;
}

/** A generated token is shown once, on stderr (never in the log), with a command that uses it. */
function showGeneratedToken({ token, file }: ResolvedToken, base: string): void {
  process.stderr.write(
    `\nReception generated an API token and saved it in ${file ?? 'the data directory'} (mode 0600).\n` +
      'It is shown this once. Read your inbox with:\n\n' +
      `  curl -H 'Authorization: Bearer ${token}' ${base}/api/deliveries\n\n`,
  );
}

/** PostgreSQL with a database URL, else SQLite in the data directory (warned of when others can read its file). */
async function openStore({ settings, logger }: Start): Promise<InboxDatabase> {
  if (settings.databaseUrl !== undefined) {
    return await PostgresStore.open({
      connectionString: settings.databaseUrl,
      schema: settings.databaseSchema,
      poolSize: settings.databasePoolSize,
    });
  }
  const store = new SqliteStore({
    file: join(settings.dataDir, 'reception.sqlite'),
    durability: settings.durability,
    checkpointThread: true,
    onCheckpointThreadFailure: (error) =>
      logger.error({ err: error }, 'the SQLite checkpoint thread stopped; checkpoints run on the event loop again'),
  });
  const warning = permissionWarning(store.file);
  if (warning !== undefined) logger.warn(warning);
  return store;
}

/** How long shutdown waits for the store's last commit (each is bounded by the store itself), and then for it to close. */
const STORE_GIVE_UP_MS = 20_000;
const STORE_CLOSE_MS = 5_000;

/** True when `promise` settles within `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = promise.then(
    () => true as const,
    () => true as const,
  );
  const result = await Promise.race([settled, late]);
  clearTimeout(timer);
  return result;
}

/**
 * Creates the data directory if needed and proves it writable, so that a bad
 * RECEPTION_DATA is told as such before anything else starts (SQLite's own
 * message would be "unable to open database file").
 */
function checkDataDir(dir: string): void {
  const probe = join(dir, `.reception-write-check-${process.pid}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(probe, '');
    rmSync(probe, { force: true });
  } catch (error) {
    throw dataDirProblem(error, dir);
  }
}
