import { describe, expect, it } from 'vitest';
import { type NewDelivery } from '../../deliveries/delivery-store.js';
import type { InboxDatabase } from '../inbox-database.js';
import { BatchRefusedError } from '../../platform/db/store-errors.js';
import { BASE_TIME, newDeliveries, newDelivery } from '../../../test/helpers/delivery-factory.js';
import { freshStoreEachTest, type OpenStore } from '../../../test/helpers/store-fixtures.js';
import { describeDedupContract } from './inbox-store-contract-dedup.js';
import { describeFindingContract } from './inbox-store-contract-finding.js';
import { describeOddValuesContract } from './inbox-store-contract-odd-values.js';
import { describeReadingContract } from './inbox-store-contract-reading.js';
import { describeSourcesContract } from './inbox-store-contract-sources.js';

/**
 * The behaviour every InboxDatabase backend owes the rest of Reception. It is
 * written against the interface only: a backend's test file calls
 * `describeInboxStore('PostgresStore', open)` and passes the same suite.
 */
export function describeInboxStore(name: string, open: OpenStore): void {
  describe(`InboxDatabase contract: ${name}`, () => {
    const store = freshStoreEachTest(open);

    describeAppendContract(store);
    describeRoundTripContract(store);
    describeLatestSeqContract(store);
    describeReadingContract(store);
    describeSourcesContract(store);
    describeDedupContract(store);
    describeOddValuesContract(store);
    describeFindingContract(store);

    it('checkWritable resolves on a working store', async () => {
      await expect(store().checkWritable()).resolves.toBeUndefined();
    });
  });
}

function describeAppendContract(store: () => InboxDatabase): void {
  describe('append', () => {
    it('answers one outcome per delivery, in batch order, with increasing seq', async () => {
      const batch = newDeliveries(5);
      const outcomes = await store().append(batch);
      expect(outcomes.map((o) => o.id)).toEqual(batch.map((d) => d.id));
      expect(outcomes.map((o) => o.receivedAt)).toEqual(batch.map((d) => d.receivedAt));
      expect(outcomes.every((o) => o.duplicate === false)).toBe(true);
      for (const [index, outcome] of outcomes.entries()) {
        expect(Number.isSafeInteger(outcome.seq)).toBe(true);
        if (index > 0) expect(outcome.seq).toBeGreaterThan(outcomes[index - 1]?.seq ?? Infinity);
      }
    });

    it('gives a later batch larger seqs than every earlier one', async () => {
      const first = await store().append(newDeliveries(3));
      const second = await store().append(newDeliveries(2, { source: 'stripe' }));
      const maxFirst = Math.max(...first.map((o) => o.seq));
      expect(Math.min(...second.map((o) => o.seq))).toBeGreaterThan(maxFirst);
    });

    it('hands out the seq that get and list show afterwards', async () => {
      const [outcome] = await store().append([newDelivery()]);
      if (outcome === undefined) throw new Error('no outcome');
      expect((await store().get(outcome.id))?.seq).toBe(outcome.seq);
      expect((await store().list({ limit: 10 })).map((d) => d.seq)).toEqual([outcome.seq]);
    });

    it('never reuses the seq of a deleted newest delivery', async () => {
      const outcomes = await store().append(newDeliveries(2));
      const newest = outcomes[1];
      if (newest === undefined) throw new Error('no outcome');
      expect(await store().delete(newest.id)).toBe(true);
      const [next] = await store().append([newDelivery()]);
      expect(next?.seq).toBeGreaterThan(newest.seq);
    });

    it('never reuses a seq after the inbox was emptied', async () => {
      const outcomes = await store().append(newDeliveries(3));
      for (const outcome of outcomes) await store().delete(outcome.id);
      expect(await store().list({ limit: 10 })).toEqual([]);
      const [next] = await store().append([newDelivery()]);
      expect(next?.seq).toBeGreaterThan(Math.max(...outcomes.map((o) => o.seq)));
    });

    it('rejects a batch that cannot be committed as a whole and keeps nothing of it', async () => {
      const before = newDelivery({ source: 'kept' });
      await store().append([before]);
      const good = newDelivery({ source: 'kept' });
      const other = newDelivery({ source: 'fresh' });
      const clash = newDelivery({ id: good.id, source: 'kept' });
      // Refused for what it holds, not for being unavailable: the write queue then retries it in parts.
      await expect(store().append([good, other, clash])).rejects.toBeInstanceOf(BatchRefusedError);
      expect(await store().get(good.id)).toBeUndefined();
      expect(await store().get(other.id)).toBeUndefined();
      expect((await store().list({ limit: 10 })).map((d) => d.id)).toEqual([before.id]);
      expect(await store().sources()).toEqual([{ source: 'kept', count: 1, lastReceivedAt: before.receivedAt }]);
    });

    it('rejects a batch whose id is already stored, leaving the stored delivery as it was', async () => {
      const first = newDelivery({ raw: Buffer.from('{"first":true}') });
      await store().append([first]);
      const innocent = newDelivery();
      const clash = newDelivery({ id: first.id, raw: Buffer.from('{"second":true}') });
      await expect(store().append([innocent, clash])).rejects.toBeInstanceOf(BatchRefusedError);
      expect(await store().get(innocent.id)).toBeUndefined();
      expect((await store().get(first.id))?.raw.toString()).toBe('{"first":true}');
    });

    it('takes writes again after a failed batch', async () => {
      const first = newDelivery();
      await expect(store().append([first, { ...first }])).rejects.toBeInstanceOf(Error);
      const outcomes = await store().append([first]);
      expect(outcomes.map((o) => o.id)).toEqual([first.id]);
      expect((await store().get(first.id))?.id).toBe(first.id);
    });
  });
}

function describeLatestSeqContract(store: () => InboxDatabase): void {
  describe('latestSeq', () => {
    it('is 0 on an empty inbox', async () => {
      expect(await store().latestSeq()).toBe(0);
    });

    it('is the seq of the last delivery committed', async () => {
      await store().append(newDeliveries(2));
      const outcomes = await store().append(newDeliveries(3, { source: 'stripe' }));
      expect(await store().latestSeq()).toBe(outcomes[2]?.seq);
    });

    it('stays put when the newest delivery is deleted, so that live readers never go back', async () => {
      const outcomes = await store().append(newDeliveries(2));
      await store().delete(outcomes[1]?.id ?? '');
      expect(await store().latestSeq()).toBe(outcomes[1]?.seq);
    });

    it('never runs behind a committed seq or ahead of the next one, also after a failed batch or repeats', async () => {
      const [first] = await store().append([newDelivery({ dedupKey: 'once' })]);
      const clash = newDelivery();
      await expect(store().append([clash, { ...clash }])).rejects.toBeInstanceOf(Error);
      await store().append([newDelivery({ dedupKey: 'once' })]);
      const latest = await store().latestSeq();
      expect(latest).toBeGreaterThanOrEqual(first?.seq ?? Infinity);
      const [next] = await store().append([newDelivery()]);
      expect(next?.seq).toBeGreaterThan(latest);
      expect(await store().latestSeq()).toBe(next?.seq);
    });
  });
}

function describeRoundTripContract(store: () => InboxDatabase): void {
  describe('get', () => {
    const everyByte = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

    it('returns every field exactly as appended', async () => {
      const delivery: NewDelivery = {
        id: 'dlv_0123-ABC_xyz',
        source: 'Ünïcode Source ✓',
        receivedAt: BASE_TIME + 7,
        method: 'POST',
        query: 'a=1&b=%20two&flag&a=3',
        contentType: 'application/cloudevents+json; charset=utf-8',
        remoteAddress: '2001:db8::7',
        headers: [
          ['Host', 'example.test'],
          ['X-Custom', 'first'],
          ['content-type', 'application/json'],
          ['x-custom', 'second'],
          ['authorization', '[redacted]'],
          ['X-Empty', ''],
          ['X-Latin1', 'caf\u00e9 \u00ff'],
        ],
        raw: Buffer.concat([
          Buffer.from('{"a":"'),
          Buffer.from([0x00, 0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]),
          Buffer.from('"}'),
        ]),
        verification: { status: 'verified', scheme: 'github' },
        dedupKey: 'delivery-72d3162e',
        eventType: 'pull_request.opened',
      };
      const [outcome] = await store().append([delivery]);
      const stored = await store().get(delivery.id);
      expect(stored).toStrictEqual({ ...delivery, seq: outcome?.seq });
      expect(Buffer.isBuffer(stored?.raw)).toBe(true);
      expect(stored?.raw.equals(delivery.raw)).toBe(true);
    });

    it('keeps all 256 byte values of the raw body, in order', async () => {
      const delivery = newDelivery({ raw: everyByte, contentType: 'application/octet-stream' });
      await store().append([delivery]);
      const raw = (await store().get(delivery.id))?.raw;
      expect(raw?.length).toBe(256);
      expect(raw?.equals(everyByte)).toBe(true);
    });

    it('keeps a verification without a scheme without adding one', async () => {
      const delivery = newDelivery({ verification: { status: 'none' } });
      await store().append([delivery]);
      const verification = (await store().get(delivery.id))?.verification;
      expect(verification).toStrictEqual({ status: 'none' });
      expect(verification).not.toHaveProperty('scheme');
      expect(verification).not.toHaveProperty('reason');
    });

    it('keeps a failed verification with its scheme and reason', async () => {
      const verification = { status: 'failed' as const, scheme: 'stripe', reason: 'no signature matched' };
      const delivery = newDelivery({ verification });
      await store().append([delivery]);
      expect((await store().get(delivery.id))?.verification).toStrictEqual(verification);
    });

    it('keeps the parsed body given beside the raw bytes exactly, in get, list and readAfter (CONTRACT 9)', async () => {
      const multipart = JSON.stringify({
        fields: { note: 'NUL \u0000 and ☃ and \ud800', to: ['a', 'b'] },
        files: [{ field: 'f', filename: 'é.png', contentType: 'image/png', size: 3 }],
      });
      const withFiles = newDelivery({ contentType: 'multipart/form-data; boundary=x', parsedBody: multipart });
      const unparsed = newDelivery({ contentType: 'application/json', parsedBody: 'null' });
      const plain = newDelivery();
      await store().append([withFiles, unparsed, plain]);
      expect((await store().get(withFiles.id))?.parsedBody).toBe(multipart);
      expect((await store().get(unparsed.id))?.parsedBody).toBe('null');
      expect(await store().get(plain.id)).not.toHaveProperty('parsedBody');
      const listed = await store().list({ limit: 10 });
      expect(listed.map((d) => d.parsedBody)).toEqual([undefined, 'null', multipart]);
      expect((await store().readAfter(0, 10)).map((d) => d.parsedBody)).toEqual([multipart, 'null', undefined]);
    });

    it('keeps an empty header list, an empty query and a null dedup key', async () => {
      const delivery = newDelivery({ headers: [], query: '', dedupKey: null, remoteAddress: '' });
      await store().append([delivery]);
      const stored = await store().get(delivery.id);
      expect(stored?.headers).toEqual([]);
      expect(stored?.query).toBe('');
      expect(stored?.dedupKey).toBeNull();
      expect(stored?.remoteAddress).toBe('');
    });

    it('keeps many deliveries of one batch apart', async () => {
      const batch = Array.from({ length: 20 }, (_, i) => newDelivery({ raw: Buffer.from([i, 0, 255 - i]) }));
      await store().append(batch);
      for (const delivery of batch) {
        expect((await store().get(delivery.id))?.raw.equals(delivery.raw)).toBe(true);
      }
    });

    it('answers undefined for an unknown id', async () => {
      await store().append([newDelivery()]);
      expect(await store().get('no-such-id')).toBeUndefined();
    });
  });
}
