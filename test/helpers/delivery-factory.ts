import { randomUUID } from 'node:crypto';
import type { NewDelivery } from '../../src/deliveries/delivery-store.js';

/** Some time in 2026, in ms; deliveries made here are received from then on. */
export const BASE_TIME = Date.UTC(2026, 10, 22, 1, 2, 3, 456);

let clock = 0;

/**
 * A delivery as the receiver would hand it to a store: a fresh id, a
 * receivedAt that grows by one second per call, a small JSON body.
 */
export function newDelivery(overrides: Partial<NewDelivery> = {}): NewDelivery {
  clock += 1;
  return {
    id: randomUUID(),
    source: 'github',
    receivedAt: BASE_TIME + clock * 1000,
    method: 'POST',
    query: '',
    contentType: 'application/json',
    remoteAddress: '203.0.113.7',
    headers: [['content-type', 'application/json']],
    raw: Buffer.from(`{"n":${clock}}`),
    verification: { status: 'none' },
    dedupKey: null,
    ...overrides,
  };
}

/** `count` deliveries made by `newDelivery` with the same overrides. */
export function newDeliveries(count: number, overrides: Partial<NewDelivery> = {}): NewDelivery[] {
  return Array.from({ length: count }, () => newDelivery(overrides));
}
