import { ProblemError } from '../platform/errors/problem-catalogue.js';
import type { InboxStore, StoredDelivery } from './delivery-store.js';

/**
 * A seq as `{id}` may give it: digits without a leading zero, short enough
 * to be an exact JavaScript integer. Ids are UUIDs (src/deliveries/delivery-id.ts),
 * never all digits, so the two cannot be mistaken for each other.
 */
const SEQ = /^[1-9][0-9]{0,14}$/;

/**
 * The delivery that `ref` names: its id, or its seq (the number the page
 * shows in the list, which `replay` and "Find" take too). A seq is unique
 * and indexed on both stores, so the short form is never ambiguous, as a
 * prefix or suffix of a UUIDv7 would be. An id is looked up first, so that a
 * delivery imported with an all-digit id is still found by it.
 */
export async function findDelivery(store: InboxStore, ref: string): Promise<StoredDelivery | undefined> {
  const byId = await store.get(ref);
  if (byId !== undefined || !SEQ.test(ref)) return byId;
  const seq = Number(ref);
  // The newest delivery at or below the seq: the one with that seq, if it is still there.
  const [found] = await store.list({ limit: 1, beforeSeq: seq + 1 });
  return found?.seq === seq ? found : undefined;
}

/** The answer for a ref that names no delivery: `404 not_found`. */
export function noDeliveryProblem(ref: string): ProblemError {
  return new ProblemError('not_found', `No delivery has the id or seq "${ref.slice(0, 100)}".`);
}

/** The delivery that `ref` names (see `findDelivery`), or `404 not_found`. */
export async function deliveryOrNotFound(store: InboxStore, ref: string): Promise<StoredDelivery> {
  const delivery = await findDelivery(store, ref);
  if (delivery === undefined) throw noDeliveryProblem(ref);
  return delivery;
}
