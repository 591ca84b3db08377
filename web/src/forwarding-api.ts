// The forwarding API (CONTRACT 6) as the page uses it: destinations, a
// delivery's forwards with their attempts, sending again, pause and resume,
// and retrying the failed ones. Same session cookie as the inbox API.

import type { Static } from 'typebox';
import type {
  AttemptSchema,
  DeliveryForwardsSchema,
  DestinationListSchema,
  ForwardSchema,
} from '../../src/api/forward-schemas.js';
import { call } from './api.ts';

// The shapes come from the API's schemas (type-only imports, erased from the bundle).

/** One destination; `kind` is `http`, `pull`, or `removed` when the config no longer names it but forwards remain. */
export type DestinationInfo = Static<typeof DestinationListSchema>['items'][number];

/** One attempt; `status` is the HTTP status, or null when there was none (timeout, refused, a pull consumer). */
export type AttemptInfo = Static<typeof AttemptSchema>;

/** One forward of a delivery, with its attempts. */
export type DeliveryForward = Static<typeof DeliveryForwardsSchema>['items'][number];

/** One row of GET /api/forwards. */
export type ForwardListItem = Static<typeof ForwardSchema>;

const JSON_POST = { method: 'POST', headers: { 'content-type': 'application/json' } } as const;

export async function listDestinations(): Promise<DestinationInfo[]> {
  const response = await call('/api/destinations');
  return ((await response.json()) as { items: DestinationInfo[] }).items;
}

export async function deliveryForwards(deliveryId: string): Promise<DeliveryForward[]> {
  const response = await call(`/api/deliveries/${encodeURIComponent(deliveryId)}/forwards`);
  return ((await response.json()) as { items: DeliveryForward[] }).items;
}

/** The newest forwards, newest first (for the list's badges). */
export async function recentForwards(limit: number): Promise<ForwardListItem[]> {
  const response = await call(`/api/forwards?limit=${limit}`);
  return ((await response.json()) as { items: ForwardListItem[] }).items;
}

/** One page of GET /api/forwards, newest first, filtered as the API filters (destination, source, status). */
export async function listForwards(query: {
  destination?: string;
  source?: string;
  status?: ForwardListItem['status'];
  limit: number;
}): Promise<{ items: ForwardListItem[]; more: boolean }> {
  const search = new URLSearchParams();
  if (query.destination !== undefined) search.set('destination', query.destination);
  if (query.source !== undefined) search.set('source', query.source);
  if (query.status !== undefined) search.set('status', query.status);
  search.set('limit', String(query.limit));
  const response = await call(`/api/forwards?${search.toString()}`);
  const page = (await response.json()) as { items: ForwardListItem[]; nextCursor: string | null };
  return { items: page.items, more: page.nextCursor !== null };
}

/** A new forward of the delivery to the destination, whatever happened before. */
export async function sendAgain(deliveryId: string, destination: string): Promise<void> {
  await call(`/api/deliveries/${encodeURIComponent(deliveryId)}/forward`, {
    ...JSON_POST,
    body: JSON.stringify({ destination }),
  });
}

export async function setPaused(destination: string, paused: boolean): Promise<void> {
  await call(`/api/destinations/${encodeURIComponent(destination)}/${paused ? 'pause' : 'resume'}`, { method: 'POST' });
}

/** Every failed forward of the destination becomes pending again with a fresh budget; answers how many. */
export async function retryFailed(destination: string): Promise<number> {
  const response = await call('/api/forwards/retry', { ...JSON_POST, body: JSON.stringify({ status: 'failed', destination }) });
  return ((await response.json()) as { retried: number }).retried;
}

/** These forwards, if failed, become pending again with a fresh budget (CONTRACT 6); answers how many did. */
export async function retryForwards(ids: readonly string[]): Promise<number> {
  const response = await call('/api/forwards/retry', { ...JSON_POST, body: JSON.stringify({ ids }) });
  return ((await response.json()) as { retried: number }).retried;
}
