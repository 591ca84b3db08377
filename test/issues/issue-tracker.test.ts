import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IssueTracker, type IssueTrackerOptions } from '../../src/issues/issue-tracker.js';
import type { IssueChange } from '../../src/issues/issue-signals.js';
import type { IssueStore } from '../../src/issues/issue-store.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import { PostgresStore } from '../../src/inbox/postgres-store.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';

/** A store that can be closed and opened again on the same file or schema: a restart. */
interface Reopenable {
  open(): Promise<InboxDatabase>;
  remove(): Promise<void>;
}

function sqliteFile(): Reopenable {
  const dir = tempDir();
  return {
    open: async () => new SqliteStore({ file: join(dir.path, 'reception.sqlite'), durability: 'full' }),
    remove: async () => dir.remove(),
  };
}

function postgresSchema(): Reopenable {
  const schema = freshSchema();
  return {
    open: () => PostgresStore.open({ connectionString: testDatabaseUrl(), schema, poolSize: 4 }),
    remove: () => dropSchema(schema),
  };
}

/** The real store, with its writes counted (nothing else changed). */
function counted(store: IssueStore): { store: IssueStore; writes: () => number } {
  let writes = 0;
  const wrapped: IssueStore = {
    occur: (...args) => (writes++, store.occur(...args)),
    resolve: (...args) => (writes++, store.resolve(...args)),
    resolveById: (...args) => store.resolveById(...args),
    resolveQuiet: (...args) => store.resolveQuiet(...args),
    list: (...args) => store.list(...args),
    get: (...args) => store.get(...args),
    countOpen: () => store.countOpen(),
  };
  return { store: wrapped, writes: () => writes };
}

/** Retries `assertion` every 20 ms until it passes, for at most 5 s. */
async function until(assertion: () => unknown): Promise<void> {
  const deadline = performance.now() + 5000;
  for (;;) {
    try {
      await assertion();
      return;
    } catch (error) {
      if (performance.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const silent = { error: () => undefined, warn: () => undefined };

const runPostgres = await requirePostgres('the PostgreSQL issue tracker tests');
const backends: Array<[string, () => Reopenable]> = [['SQLite', sqliteFile]];
if (runPostgres) backends.push(['PostgreSQL', postgresSchema]);

describe.each(backends)('IssueTracker on %s', (_name, make) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A fresh store and a tracker on it, both closed after the test. */
  async function setUp(options: Partial<IssueTrackerOptions> = {}) {
    const place = make();
    cleanups.push(() => place.remove());
    const db = await place.open();
    const { store, writes } = counted(db.issues);
    const tracker = new IssueTracker({ store, logger: silent, flushMs: 10, ...options });
    const changes: IssueChange[] = [];
    tracker.onChange((change) => changes.push(change));
    let closed = false;
    const close = async (): Promise<void> => {
      if (closed) return;
      closed = true;
      await tracker.stop();
      await db.close();
    };
    cleanups.push(close);
    return { place, db, tracker, changes, writes, close };
  }

  it('opens an issue, counts on it, and a burst of 1,000 occurrences costs a handful of writes', async () => {
    const { tracker, changes, writes, db } = await setUp();
    const started = performance.now();
    for (let i = 0; i < 1000; i++) tracker.occurred('dead_letters', 'app', `HTTP 500 #${i}`);
    // The calls return at once: nothing was written on the caller's path.
    expect(writes()).toBe(0);
    expect(performance.now() - started).toBeLessThan(200);
    await tracker.flush();
    expect(writes()).toBeLessThanOrEqual(2);
    const [issue] = await db.issues.list({ limit: 10 });
    expect(issue).toMatchObject({
      kind: 'dead_letters',
      subject: 'app',
      status: 'open',
      count: 1000,
      lastError: 'HTTP 500 #999',
    });
    tracker.occurred('dead_letters', 'app', null);
    await tracker.flush();
    expect((await db.issues.get(issue?.id ?? ''))?.count).toBe(1001);
    expect((await db.issues.get(issue?.id ?? ''))?.lastError).toBe('HTTP 500 #999');
    expect(changes.map((c) => [c.type, c.issue.count])).toEqual([['issue.opened', 1000]]);
  });

  it('resolves by signal; the next occurrence opens a new issue, each transition told once', async () => {
    const { tracker, changes, db } = await setUp();
    tracker.occurred('destination_down', 'app', 'connect ECONNREFUSED');
    await tracker.flush();
    tracker.cleared('destination_down', 'app');
    tracker.cleared('destination_down', 'app');
    await tracker.flush();
    tracker.cleared('destination_down', 'app');
    await tracker.flush();
    tracker.occurred('destination_down', 'app', 'HTTP 502');
    await tracker.flush();
    expect(changes.map((c) => c.type)).toEqual(['issue.opened', 'issue.resolved', 'issue.opened']);
    const [first, , second] = changes;
    expect(second?.issue.id).not.toBe(first?.issue.id);
    expect(changes[1]?.issue).toMatchObject({ id: first?.issue.id, status: 'resolved' });
    expect((await db.issues.list({ limit: 10 })).map((i) => i.status)).toEqual(['open', 'resolved']);
  });

  it('keeps the order of occurrences and clears gathered in one flush', async () => {
    const { tracker, changes, db } = await setUp({ flushMs: 1000 });
    tracker.occurred('backlog', 'app', 'oldest 400 s');
    tracker.occurred('backlog', 'app', 'oldest 401 s');
    tracker.cleared('backlog', 'app');
    tracker.occurred('backlog', 'app', 'oldest 302 s');
    await tracker.flush();
    expect(changes.map((c) => [c.type, c.issue.count])).toEqual([
      ['issue.opened', 2],
      ['issue.resolved', 2],
      ['issue.opened', 1],
    ]);
    expect((await db.issues.countOpen()).backlog).toBe(1);
  });

  it('resolves by a person: resolved once, then already resolved; an unknown id is not found', async () => {
    const { tracker, changes } = await setUp();
    tracker.occurred('transform_failing', 'slack-text', 'TypeError: x is undefined');
    await tracker.flush();
    const id = changes[0]?.issue.id ?? '';
    expect((await tracker.resolve(id)).status).toBe('resolved');
    expect((await tracker.resolve(id)).status).toBe('already_resolved');
    expect((await tracker.resolve('nope')).status).toBe('not_found');
    expect(changes.map((c) => c.type)).toEqual(['issue.opened', 'issue.resolved']);
  });

  it('resolves quiet verification and transform issues after the quiet period, and not the others', async () => {
    // The tracker's own clock, moved by the test: what resolves depends on the times signalled, not on how fast
    // the machine runs the test (a CI run on a busy machine saw the 200 ms wait below outlast the period).
    let clock = Date.UTC(2026, 10, 28, 6, 0, 0);
    const { tracker, changes, db } = await setUp({ quietMs: 300, sweepMs: 60_000, now: () => clock });
    const resolvedKinds = (): string[] => changes.filter((c) => c.type === 'issue.resolved').map((c) => c.issue.kind);
    tracker.occurred('verification_failing', 'stripe', 'signature mismatch');
    tracker.occurred('transform_failing', 'slack-text', 'boom');
    tracker.occurred('destination_down', 'app', 'HTTP 500');
    await tracker.flush();
    // Still failing: a new occurrence within the period keeps it open.
    clock += 200;
    tracker.occurred('verification_failing', 'stripe', 'signature mismatch');
    await tracker.flush();
    clock += 150;
    await tracker.sweep();
    expect(resolvedKinds()).toEqual(['transform_failing']);
    clock += 400;
    await tracker.sweep();
    expect(resolvedKinds()).toEqual(['transform_failing', 'verification_failing']);
    expect(await db.issues.countOpen()).toMatchObject({ destination_down: 1, verification_failing: 0, transform_failing: 0 });
  });

  it('survives a restart: issues written at stop are there when the store opens again, and count on', async () => {
    const { place, tracker, close } = await setUp({ flushMs: 60_000 });
    tracker.occurred('dead_letters', 'app', 'HTTP 410');
    tracker.occurred('dead_letters', 'app', 'HTTP 410');
    // Not flushed yet: stop writes what is pending.
    await close();
    const db = await place.open();
    cleanups.push(() => db.close());
    const again = new IssueTracker({ store: db.issues, logger: silent, flushMs: 10 });
    cleanups.push(() => again.stop());
    const [issue] = await db.issues.list({ limit: 10, status: 'open' });
    expect(issue).toMatchObject({ kind: 'dead_letters', subject: 'app', count: 2 });
    again.occurred('dead_letters', 'app', null);
    await again.flush();
    expect((await db.issues.get(issue?.id ?? ''))?.count).toBe(3);
    expect(await again.openCounts()).toMatchObject({ dead_letters: 1 });
  });

  it('never throws at the caller: a batch the store refuses is logged once and tried again, in order', async () => {
    const place = make();
    cleanups.push(() => place.remove());
    const db = await place.open();
    cleanups.push(() => db.close());
    let refuse = 1;
    const errors: string[] = [];
    const store: IssueStore = {
      occur: (...args) => {
        if (refuse-- > 0) return Promise.reject(new Error('the store is away'));
        return db.issues.occur(...args);
      },
      resolve: (...args) => db.issues.resolve(...args),
      resolveById: (...args) => db.issues.resolveById(...args),
      resolveQuiet: (...args) => db.issues.resolveQuiet(...args),
      list: (...args) => db.issues.list(...args),
      get: (...args) => db.issues.get(...args),
      countOpen: () => db.issues.countOpen(),
    };
    const tracker = new IssueTracker({
      store,
      logger: { ...silent, error: (_o: unknown, msg?: string) => void errors.push(msg ?? '') },
      flushMs: 5,
      retryMs: 50,
    });
    cleanups.push(() => tracker.stop());
    expect(() => tracker.occurred('backlog', 'app', 'old')).not.toThrow();
    tracker.occurred('backlog', 'other', null);
    await tracker.flush();
    // One line for the batch, not one per subject; nothing is written again before retryMs.
    expect(errors).toHaveLength(1);
    expect(await db.issues.list({ limit: 5 })).toEqual([]);
    tracker.occurred('backlog', 'app', 'older');
    await until(async () =>
      expect((await db.issues.list({ limit: 5 })).map((i) => [i.subject, i.count, i.lastError]).sort()).toEqual([
        ['app', 2, 'older'],
        ['other', 1, null],
      ]),
    );
    expect(errors).toHaveLength(1);
  });

  it('a listener that throws is logged; the others are told', async () => {
    const errors: string[] = [];
    const { tracker } = await setUp({ logger: { ...silent, error: (_o: unknown, msg?: string) => void errors.push(msg ?? '') } });
    const told: string[] = [];
    tracker.onChange(() => {
      throw new Error('bad listener');
    });
    const stop = tracker.onChange((c) => told.push(c.type));
    tracker.occurred('backlog', 'a', null);
    await tracker.flush();
    stop();
    tracker.cleared('backlog', 'a');
    await tracker.flush();
    expect(told).toEqual(['issue.opened']);
    expect(errors).toContain('issues: a listener failed');
  });
});

describe.runIf(runPostgres)('IssueTracker: several instances on one PostgreSQL database', () => {
  it('concurrent occurrences from three trackers make one open issue, told opened by one instance, counted by all', async () => {
    const place = postgresSchema();
    const stores = [await place.open(), await place.open(), await place.open()];
    const trackers = stores.map((db) => new IssueTracker({ store: db.issues, logger: silent, flushMs: 60_000 }));
    const changes: IssueChange[] = [];
    for (const tracker of trackers) tracker.onChange((c) => changes.push(c));
    try {
      for (let round = 0; round < 5; round++) {
        for (const tracker of trackers)
          for (let i = 0; i < 10; i++) tracker.occurred('destination_down', `app${round}`, 'HTTP 500');
        await Promise.all(trackers.map((t) => t.flush()));
      }
      expect(
        changes
          .filter((c) => c.type === 'issue.opened')
          .map((c) => c.issue.subject)
          .sort(),
      ).toEqual(['app0', 'app1', 'app2', 'app3', 'app4']);
      const open = await stores[0]?.issues.list({ limit: 10, status: 'open' });
      expect(open?.map((i) => i.count)).toEqual([30, 30, 30, 30, 30]);
      // All clear at once: one resolution each, told by one instance.
      for (const tracker of trackers) for (let round = 0; round < 5; round++) tracker.cleared('destination_down', `app${round}`);
      await Promise.all(trackers.map((t) => t.flush()));
      expect(changes.filter((c) => c.type === 'issue.resolved')).toHaveLength(5);
    } finally {
      for (const tracker of trackers) await tracker.stop();
      for (const db of stores) await db.close();
      await place.remove();
    }
  });
});
