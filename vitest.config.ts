import pg from 'pg';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The parallel suite. test/integration runs twice, as two projects: once on
 * SQLite and once on PostgreSQL (`RECEPTION_TEST_STORE`, read by
 * test/helpers/app.ts `startApp`). test/serial runs after it, alone
 * (vitest.serial.config.ts).
 */

/** Integration files that are about SQLite itself (its file, its lock, its disk) or hold its commits: not run again on PostgreSQL. */
const SQLITE_ONLY = ['full-disk', 'storage-unavailable', 'stream-hub', 'receive-half-close'];
/**
 * Integration files that already run each case on both stores themselves
 * (`startAppOnKind` over both kinds): run once, in the SQLite project; the
 * PostgreSQL project would only repeat them.
 */
const BOTH_STORES_INSIDE = [
  'finding',
  'impossible-ids',
  'one-bad-delivery',
  'readiness',
  'body-kinds',
  'custom-answers',
  'refusal-flood',
  'refusal-writer',
  'refusals',
];

/** Unit files that replace a module (`vi.mock`): each needs a process of its own. */
const ISOLATED_UNIT = ['test/unit/auth/token-constant-time.test.ts'];

const DATABASE_URL = process.env.RECEPTION_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Why PostgreSQL cannot be used, or undefined when it answers. */
async function postgresProblem(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const problem = await postgresProblem();
// Under CI the PostgreSQL project always runs: a missing database fails its tests, never skips them.
const onPostgres = problem === undefined || process.env.CI === 'true';
if (!onPostgres) {
  process.stderr.write(
    `\n!!! SKIPPING test/integration on PostgreSQL: ${DATABASE_URL} is not reachable (${problem}).\n` +
      '!!! Start PostgreSQL or set RECEPTION_TEST_DATABASE_URL=postgres://… to run it.\n\n',
  );
}
/**
 * Test files at once. Vitest's default is one fewer than the cores: one on the 2-core CI machine,
 * where most files wait on fsyncs, sockets and child processes far more than they compute.
 * RECEPTION_TEST_WORKERS sets another number.
 */
const WORKERS = Number(process.env.RECEPTION_TEST_WORKERS ?? '') || 3;
const integration = (names: string[]): string[] => names.map((name) => `test/integration/${name}.test.ts`);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: WORKERS,
    projects: [
      {
        extends: true as const,
        test: {
          name: 'main',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/serial/**', 'test/integration/**', 'test/unit/**'],
        },
      },
      {
        // Pure unit tests, all in one process: starting a fresh one per file cost more than the tests themselves
        // (68 files: 77 s isolated, 25 s not, measured on 2 cores). A file that mocks a module keeps its own process.
        extends: true as const,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ISOLATED_UNIT],
          isolate: false,
        },
      },
      {
        extends: true as const,
        test: { name: 'unit-isolated', include: ISOLATED_UNIT },
      },
      {
        extends: true as const,
        test: {
          name: 'integration-sqlite',
          include: ['test/integration/**/*.test.ts'],
          // Each file starts its own app on its own store (a temp file, a fresh schema) and shares nothing else: one
          // process for them all. A process per file loaded the app again each time (24 files: 199 s isolated, 66 s not).
          isolate: false,
          env: { RECEPTION_TEST_STORE: 'sqlite' },
        },
      },
      ...(onPostgres
        ? [
            {
              extends: true as const,
              test: {
                name: 'integration-postgres',
                include: ['test/integration/**/*.test.ts'],
                isolate: false,
                exclude: [...configDefaults.exclude, ...integration([...SQLITE_ONLY, ...BOTH_STORES_INSIDE])],
                env: { RECEPTION_TEST_STORE: 'postgres' },
              },
            },
          ]
        : []),
    ],
  },
});
