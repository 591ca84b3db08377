import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { BackgroundIndex } from '../../src/search/background-index.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir();
afterEach(() => dir.remove());

/**
 * A stop that comes while a step is running (on PostgreSQL a step is a round
 * trip, so it often is) ends the indexer when that step ends, not after the
 * idle wait that would follow it (5 s: it held every PostgreSQL shutdown).
 */
it('stops as soon as the step in flight ends', async () => {
  const real = new SqliteStore({ file: join(dir.path, 'inbox.db'), durability: 'full' });
  let stepStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (stepStarted = resolve));
  let releaseStep: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (releaseStep = resolve));
  // The real store, its step held open until the test lets it go.
  const store = Object.create(real) as InboxDatabase;
  store.indexStep = async (budget, derive) => {
    stepStarted();
    await released;
    return real.indexStep(budget, derive);
  };
  const index = new BackgroundIndex({
    store,
    derive: () => null,
    logger: { info: () => undefined, warn: () => undefined },
    busy: () => false,
    pollMs: 60_000,
  });
  index.start();
  await started;
  const t0 = performance.now();
  const stopped = index.stop();
  releaseStep();
  await stopped;
  expect(performance.now() - t0).toBeLessThan(1000);
  await real.close();
});
