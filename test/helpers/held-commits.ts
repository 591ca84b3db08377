import type { SqliteStore } from '../../src/inbox/sqlite-store.js';

/**
 * The real store, seen through a view whose commits wait until `release()`:
 * for tests that look at what happens while a commit is running.
 */
export function holdCommits(store: SqliteStore): { store: SqliteStore; release: () => void } {
  let release = (): void => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const holding = Object.create(store) as SqliteStore;
  holding.append = async (batch) => {
    await held;
    return store.append(batch);
  };
  return { store: holding, release: () => release() };
}
