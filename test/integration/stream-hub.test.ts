import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredDelivery } from '../../src/store/inbox-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { LocalCommitFeed } from '../../src/stream/commit-feed.js';
import { StreamHub } from '../../src/stream/stream-hub.js';
import { tempDir } from '../helpers/temp-dir.js';
import { newDeliveries } from '../store/delivery-factory.js';
import { eventually } from '../helpers/eventually.js';

/** A reader's end of the stream: the seqs of the events written to it. */
function reader(): { out: PassThrough; seqs: () => number[] } {
  const out = new PassThrough();
  let text = '';
  out.setEncoding('utf8').on('data', (chunk: string) => { text += chunk; });
  return { out, seqs: () => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1])) };
}

/** The stream hub on a real SQLite store, its readers real streams. */
describe('StreamHub', () => {
  let dir: ReturnType<typeof tempDir>;
  let store: SqliteStore;
  let feed: LocalCommitFeed;
  let hub: StreamHub;
  /** Store reads, by the source they asked for ('' for all). */
  let reads: string[];
  /** While set, each read's answer (already read) waits for it. */
  let gate: Promise<void> | undefined;

  const commit = async (count: number, source: string): Promise<StoredDelivery['seq'][]> => {
    const outcomes = await store.append(newDeliveries(count, { source }));
    feed.publish();
    return outcomes.map((o) => o.seq);
  };

  beforeEach(() => {
    dir = tempDir();
    store = new SqliteStore({ file: join(dir.path, 'reception.sqlite'), durability: 'relaxed' });
    reads = [];
    gate = undefined;
    const readAfter = store.readAfter.bind(store);
    store.readAfter = async (after, limit, source) => {
      reads.push(source ?? '');
      const rows = await readAfter(after, limit, source);
      if (gate !== undefined) await gate;
      return rows;
    };
    feed = new LocalCommitFeed();
    hub = new StreamHub({ store, feed, render: (d) => JSON.stringify({ seq: d.seq }), maxBufferedBytes: 1 << 20, heartbeatMs: 60_000 });
  });
  afterEach(async () => {
    hub.closeAll();
    await store.close();
    dir.remove();
  });

  it('sends a commit that lands while the last reader leaves and a new one comes, without waiting for the next', async () => {
    const [first] = await commit(1, 'a');
    const a = reader();
    hub.open(a.out, { afterSeq: 0 });
    await eventually(() => a.seqs().length === 1);
    let release = (): void => undefined;
    gate = new Promise((resolve) => { release = resolve; });
    const [second] = await commit(1, 'a');
    a.out.destroy();
    await eventually(() => hub.size === 0);
    const b = reader();
    hub.open(b.out, { afterSeq: second ?? 0 });
    const [third] = await commit(1, 'a');
    gate = undefined;
    release();
    await eventually(() => b.seqs().includes(third ?? -1));
    expect(b.seqs()).toEqual([third]);
    expect(first).toBeLessThan(second ?? 0);
  });

  it('lets a reader of a quiet source that starts behind join the shared frames instead of reading the store at every commit', async () => {
    // The quiet source's last delivery is far behind the newest one.
    const [rare] = await commit(1, 'rare');
    const [newest] = await commit(300, 'busy').then((seqs) => seqs.slice(-1));
    const quiet = reader();
    const everything = reader();
    hub.open(everything.out, { afterSeq: newest ?? 0 });
    hub.open(quiet.out, { afterSeq: 0, source: 'rare' });
    await eventually(() => quiet.seqs().length === 1);
    reads = [];
    for (let i = 0; i < 50; i++) await commit(1, 'busy');
    await eventually(() => everything.seqs().length === 50);
    // One read per commit by the hub; none, or next to none, by the readers.
    expect(reads.filter((source) => source === 'rare').length).toBeLessThanOrEqual(2);
    expect(reads.length).toBeLessThanOrEqual(52);
    // Every reader is past the frames: the hub lets them go.
    await commit(1, 'busy');
    await eventually(() => everything.seqs().length === 51);
    expect(hub.recentFrames).toBeLessThanOrEqual(1);
    expect(quiet.seqs()).toEqual([rare]);
  });

  it('ends at once the session of a client that left before its stream began', () => {
    const gone = reader();
    gone.out.destroy();
    const session = hub.open(gone.out, { afterSeq: 0 });
    expect(session.isOpen).toBe(false);
    expect(hub.size).toBe(0);
    expect(feed.subscriberCount).toBe(0);
  });
});
