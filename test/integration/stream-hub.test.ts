import { join } from 'node:path';

import { PassThrough, Writable } from 'node:stream';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { StoredDelivery } from '../../src/deliveries/delivery-store.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';

import { LocalCommitFeed } from '../../src/deliveries/commit-feed.js';

import { StreamHub } from '../../src/stream/stream-hub.js';

import { tempDir } from '../helpers/temp-dir.js';

import { newDeliveries } from '../helpers/delivery-factory.js';

import { eventually } from '../helpers/eventually.js';

/** A reader's end of the stream: the seqs of the events written to it. */
function reader(): { out: PassThrough; seqs: () => number[] } {
  const out = new PassThrough();
  let text = '';
  out.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
  });
  return { out, seqs: () => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1])) };
}

/** A reader that keeps every chunk written to it, as written (a Buffer stays the same object). */
function recorder(): { out: Writable; frames: () => Map<number, Buffer> } {
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  const frames = (): Map<number, Buffer> =>
    new Map(
      chunks
        .filter((chunk) => chunk.includes('event: delivery'))
        .map((chunk) => [Number(/^id: (\d+)/.exec(chunk.toString('latin1'))?.[1]), chunk]),
    );
  return { out, frames };
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
    hub = new StreamHub({
      store,
      feed,
      render: (d) => JSON.stringify({ seq: d.seq }),
      maxBufferedBytes: 1 << 20,
      heartbeatMs: 60_000,
    });
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
    gate = new Promise((resolve) => {
      release = resolve;
    });
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

  it('writes the same rendered Buffer to every reader of a new delivery, not a copy each', async () => {
    const readers = [recorder(), recorder(), recorder()];
    for (const r of readers) hub.open(r.out, { afterSeq: 0 });
    await eventually(() => feed.subscriberCount === 1);
    const [seq = 0] = await commit(1, 'a');
    await eventually(() => readers.every((r) => r.frames().has(seq)));
    const [first, ...others] = readers.map((r) => r.frames().get(seq));
    expect(Buffer.isBuffer(first)).toBe(true);
    for (const other of others) expect(other).toBe(first);
  });

  it('writes the same Buffer to readers that catch up from the store, while any still holds it', async () => {
    const seqs = await commit(3, 'a');
    // The hub's frames begin at the newest seq when the first reader comes: these two read the store themselves.
    const readers = [recorder(), recorder()];
    for (const r of readers) hub.open(r.out, { afterSeq: 0, source: 'a' });
    await eventually(() => readers.every((r) => r.frames().size === 3));
    expect(reads.filter((source) => source === 'a').length).toBeGreaterThanOrEqual(2);
    const [a, b] = readers.map((r) => r.frames());
    for (const seq of seqs) {
      expect(Buffer.isBuffer(a?.get(seq))).toBe(true);
      expect(b?.get(seq)).toBe(a?.get(seq));
    }
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
