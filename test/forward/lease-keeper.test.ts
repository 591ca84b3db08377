import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { LeaseKeeper } from '../../src/forwarding/lease-keeper.js';
import type { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { freshStoreEachTest, sqliteFixture } from '../helpers/store-fixtures.js';
import { BUDGET, deliverAll, forward, forwardOf } from '../../src/forwarding/outbox/contract/outbox-contract-support.js';

/**
 * CONTRACT 6 "After a crash": an instance renews its push leases while it
 * lives, and starts an attempt only on a forward whose lease it is sure of
 * (a renewal sent after the claim extended it, or the claim's own lease
 * still has a fifth of its length to run). On a real SQLite file.
 */
describe('LeaseKeeper', () => {
  const store = freshStoreEachTest(sqliteFixture) as () => SqliteStore;
  const LEASE = 10_000;

  async function claimNow(keeper: LeaseKeeper): Promise<{ id: string; claimedAt: number; until: number }> {
    const now = Date.now();
    const [claimed] = await store().outbox.claim({
      destination: 'app',
      max: 1,
      leaseMs: keeper.leaseMs,
      now,
      ordered: false,
      budget: BUDGET,
      owner: keeper.owner,
    });
    if (claimed === undefined) throw new Error('nothing claimed');
    return { id: claimed.forward.id, claimedAt: Date.now(), until: claimed.forward.leaseUntil ?? 0 };
  }

  it("renews the instance's leases in the store, and counts a renewal only for forwards claimed before it was sent", async () => {
    const [first, second] = await deliverAll(store(), [{}, {}]);
    const keeper = new LeaseKeeper(store().outbox, pino({ level: 'silent' }), LEASE);
    const a = await claimNow(keeper);
    expect(a.id).toBe(forwardOf(first));
    await new Promise((resolve) => setTimeout(resolve, 5));
    await keeper.renew();
    const renewed = (await forward(store(), a.id)).leaseUntil ?? 0;
    expect(renewed).toBeGreaterThan(a.until);
    expect(keeper.certainUntil(a.id, a.claimedAt, a.until)).toBe(renewed);
    // Claimed after that renewal was sent: only its own lease counts until the next one.
    const b = await claimNow(keeper);
    expect(b.id).toBe(forwardOf(second));
    expect(keeper.certainUntil(b.id, b.claimedAt, b.until)).toBe(b.until);
    // Another instance's keeper renews none of them.
    const other = new LeaseKeeper(store().outbox, pino({ level: 'silent' }), LEASE);
    await other.renew();
    expect(other.certainUntil(a.id, a.claimedAt, a.until)).toBe(a.until);
    expect((await forward(store(), a.id)).leaseUntil).toBe(renewed);
  });

  it('lets an attempt start only while a fifth of the lease is surely left', async () => {
    await deliverAll(store(), [{}]);
    const keeper = new LeaseKeeper(store().outbox, pino({ level: 'silent' }), LEASE);
    const a = await claimNow(keeper);
    expect(keeper.mayStart(a.id, a.claimedAt, a.until, a.until - LEASE / 5)).toBe(true);
    // Renewals failing since the claim: past four fifths of the lease it is handed back, not sent.
    expect(keeper.mayStart(a.id, a.claimedAt, a.until, a.until - LEASE / 5 + 1)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await keeper.renew();
    expect(keeper.mayStart(a.id, a.claimedAt, a.until, a.until - LEASE / 5 + 1)).toBe(true);
  });
});
