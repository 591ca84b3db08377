import { join, resolve } from 'node:path';
import type { InboxStore, NewDelivery } from '../deliveries/delivery-store.js';
import { indexFile, readEntries } from './import-file.js';
import { parseCommand, renderHelp, stringFlag, UsageError, type CommandSpec } from './usage.js';

export const importSpec: CommandSpec = {
  name: 'import',
  summary: 'load a file written by export --raw into an inbox, keeping ids, times, order and bytes',
  usage: ['import FILE [--data DIR | --database-url URL [--database-schema NAME]]'],
  description:
    'Reads a file written by "reception export --raw" and stores each delivery in the inbox named by --data (SQLite) ' +
    'or --database-url (PostgreSQL), as the server would find them: the same ids, receivedAt, method, query string, ' +
    'headers, verification, event type and raw bytes (a line without "eventType", from an older export, gets the one ' +
    "the receiver would give it by its scheme, headers and body; a source's own eventType setting is not known here). It writes to the store directly, not through the API: run it where the " +
    'database is, with the settings the server uses (RECEPTION_DATA, RECEPTION_DATABASE_URL, RECEPTION_DATABASE_SCHEMA). ' +
    'Deliveries are stored oldest first, so that the new inbox keeps their order; their seq is their position in the new ' +
    'inbox, after what it already holds. Every line is checked before anything is stored: a bad line stops the import ' +
    'and names the line. A delivery whose id the inbox already has is left as it is, so an import that stopped can be ' +
    'run again. Not carried over: forwards (nothing imported is forwarded) and dedup keys (a repeat of an imported ' +
    'delivery from its sender is stored anew). A server running on the same inbox shows imported deliveries in its live ' +
    'stream as if they had just arrived: import into an inbox whose server is stopped, or whose readers expect it.',
  flags: [
    {
      name: 'data',
      type: 'string',
      value: 'DIR',
      env: 'RECEPTION_DATA',
      default: './data',
      help: 'The SQLite inbox: the data directory.',
    },
    {
      name: 'database-url',
      type: 'string',
      value: 'URL',
      env: 'RECEPTION_DATABASE_URL',
      help: 'A postgres:// URL: import into PostgreSQL instead.',
    },
    {
      name: 'database-schema',
      type: 'string',
      value: 'NAME',
      env: 'RECEPTION_DATABASE_SCHEMA',
      default: 'public',
      help: "The PostgreSQL schema of Reception's tables.",
    },
  ],
  positionals: 1,
  examples: [
    'reception export --raw > inbox.ndjson && reception import inbox.ndjson --data ./other-data',
    'reception import inbox.ndjson --database-url postgres://reception@db/reception',
  ],
};

/** A transaction of the import: at most this many deliveries and about this many body bytes, as the server's group commit. */
const BATCH_DELIVERIES = 500;
const BATCH_BYTES = 16 * 1024 * 1024;

export async function runImport(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(importSpec, argv);
  if (values.help === true) {
    process.stdout.write(renderHelp(importSpec));
    return 0;
  }
  const file = positionals[0];
  if (file === undefined || file === '')
    throw new UsageError('which file? reception import FILE (written by reception export --raw).');
  const databaseUrl = stringFlag(values, 'database-url', 'RECEPTION_DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new UsageError('--database-url: expected a URL that starts with postgres:// or postgresql://.');
  }
  const schema = stringFlag(values, 'database-schema', 'RECEPTION_DATABASE_SCHEMA') ?? 'public';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new UsageError(`--database-schema: expected a lower-case SQL identifier such as "reception", got "${schema}".`);
  }
  const dataDir = resolve(stringFlag(values, 'data', 'RECEPTION_DATA') ?? './data');

  const entries = await indexFile(file);
  const { store, where } = await openStore(databaseUrl, schema, dataDir);
  let imported = 0;
  let present = 0;
  try {
    let batch: NewDelivery[] = [];
    let bytes = 0;
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      await store.append(batch);
      imported += batch.length;
      batch = [];
      bytes = 0;
    };
    for (const delivery of readEntries(file, entries)) {
      if ((await store.get(delivery.id)) !== undefined) {
        present += 1;
        continue;
      }
      if (batch.length >= BATCH_DELIVERIES || (batch.length > 0 && bytes + delivery.raw.length > BATCH_BYTES)) await flush();
      batch.push(delivery);
      bytes += delivery.raw.length;
    }
    await flush();
  } finally {
    await store.close();
  }
  const already = present === 0 ? '' : `; ${present} already there, left as they were`;
  process.stderr.write(`import: ${imported} deliveries stored in ${where}, oldest first${already}\n`);
  return 0;
}

async function openStore(
  databaseUrl: string | undefined,
  schema: string,
  dataDir: string,
): Promise<{ store: InboxStore; where: string }> {
  if (databaseUrl !== undefined) {
    const { describeServer, PostgresStore } = await import('../inbox/postgres-store.js');
    const store = await PostgresStore.open({ connectionString: databaseUrl, schema });
    return { store, where: `PostgreSQL ${describeServer(databaseUrl)}, schema ${schema}` };
  }
  const { SqliteStore } = await import('../inbox/sqlite-store.js');
  const file = join(dataDir, 'reception.sqlite');
  // The strongest durability: an import is not a hot path, and what it stored must stay stored.
  return { store: new SqliteStore({ file, durability: 'full' }), where: file };
}
