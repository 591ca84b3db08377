import { join } from 'node:path';
import { buildApp } from './app.js';
import { resolveToken } from './auth/token.js';
import type { Settings } from './config/settings.js';
import { loadConfigFile } from './config/source-config.js';
import { SourceRules } from './receive/source-rules.js';
import { createLogger, endDestination, stdoutDestination } from './observe/logger.js';
import { Metrics } from './observe/metrics.js';
import { RetentionPruner } from './retention/pruner.js';
import type { InboxStore } from './store/inbox-store.js';
import { PostgresStore } from './store/postgres/postgres-store.js';
import { SqliteStore } from './store/sqlite/sqlite-store.js';
import { PostgresCommitFeed } from './stream/postgres-commit-feed.js';

/** Starts Reception: settings, store, app, listen; drains on SIGTERM and SIGINT. */
export async function startServer(settings: Settings): Promise<void> {
  const logDestination = stdoutDestination();
  const logger = createLogger(settings.logLevel, logDestination);
  const store = await openStore(settings);
  const feed = settings.databaseUrl === undefined || !(store instanceof PostgresStore)
    ? undefined
    : new PostgresCommitFeed(settings.databaseUrl, store.channel, logger);
  await feed?.start();
  const { token, generated, file } = resolveToken(settings.token, settings.dataDir);
  const metrics = new Metrics();
  const defaults = { maxBodyBytes: settings.maxBodyBytes, anyJson: false };
  const loadRules = (): SourceRules => SourceRules.fromConfig(
    settings.configFile === undefined ? undefined : loadConfigFile(settings.configFile), defaults,
  );
  const app = await buildApp({ ...settings, store, token, logger, metrics, rules: loadRules(), ...(feed === undefined ? {} : { feed }) });
  process.on('SIGHUP', () => {
    if (settings.configFile === undefined) {
      logger.info('SIGHUP: there is no config file (RECEPTION_CONFIG) to reload');
      return;
    }
    try {
      const rules = loadRules();
      app.setRules(rules);
      metrics.configReloads.inc({ result: 'ok' });
      logger.info({ file: settings.configFile, sources: rules.configuredSources.length, strict: rules.strict }, 'config reloaded');
    } catch (error) {
      metrics.configReloads.inc({ result: 'refused' });
      logger.error({ file: settings.configFile, problem: error instanceof Error ? error.message : String(error) },
        'config reload refused: the previous config stays in force');
    }
  });
  const pruner = settings.retentionMs === undefined
    ? undefined
    : new RetentionPruner({ store, retentionMs: settings.retentionMs, logger, metrics });

  let shuttingDown = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal, graceMs: settings.shutdownGraceMs }, 'shutting down: answering requests in flight');
    app.beginClosing();
    const closed = new Promise<void>((resolve) => app.server.close(() => resolve()));
    app.server.closeIdleConnections();
    const grace = setTimeout(() => {
      logger.warn('grace period over: closing the connections still open');
      app.server.closeAllConnections();
    }, settings.shutdownGraceMs);
    await closed;
    clearTimeout(grace);
    await pruner?.stop();
    await app.queue.drain();
    await feed?.stop();
    await store.close();
    logger.info('stopped');
    await endDestination(logDestination);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await new Promise<void>((resolve, reject) => {
    app.server.once('error', reject);
    app.server.listen(settings.port, settings.host, () => resolve());
  });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : settings.port;
  const base = `http://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${port}`;
  logger.info({ url: base, store: store.kind, durability: settings.durability, dataDir: settings.dataDir }, 'listening');
  pruner?.start();
  if (generated) {
    process.stderr.write(
      `\nReception generated an API token and saved it in ${file ?? 'the data directory'} (mode 0600).\n`
      + 'It is shown this once. Read your inbox with:\n\n'
      + `  curl -H 'Authorization: Bearer ${token}' ${base}/api/deliveries\n\n`,
    );
  }
}

async function openStore(settings: Settings): Promise<InboxStore> {
  if (settings.databaseUrl !== undefined) {
    return await PostgresStore.open({
      connectionString: settings.databaseUrl,
      schema: settings.databaseSchema,
      poolSize: settings.databasePoolSize,
    });
  }
  return new SqliteStore({ file: join(settings.dataDir, 'reception.sqlite'), durability: settings.durability });
}
