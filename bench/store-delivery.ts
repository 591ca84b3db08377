import { randomUUID } from 'node:crypto';
import type { NewDelivery } from '../src/deliveries/delivery-store.js';

/** A delivery as the receiver hands it to a store, for benches that append without HTTP in front. */
export function storeDelivery(raw: Buffer): NewDelivery {
  return {
    id: randomUUID(),
    source: 'bench',
    receivedAt: Date.now(),
    method: 'POST',
    query: '',
    contentType: 'application/json',
    remoteAddress: '127.0.0.1',
    headers: [['content-type', 'application/json']],
    raw,
    verification: { status: 'none' },
    dedupKey: null,
    eventType: 'bench.event',
  };
}
