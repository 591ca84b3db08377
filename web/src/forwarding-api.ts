// The forwarding API (CONTRACT 6) as the page uses it: destinations, a
// delivery's forwards with their attempts, sending again, pause and resume,
// and retrying the failed ones. Same session cookie as the inbox API.

import { call } from './api.ts';
import type { ForwardStatus } from './delivery.ts';

export interface DestinationInfo {
  name: string;
  /** `http`, `pull`, or `removed` when the config no longer names it but forwards remain. */
  kind: string;
  url: string | null;
  paused: boolean;
  /** Forwards not yet settled (pending and delivering). */
  pending: number;
  failed: number;
  oldestPendingAt: string | null;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  lastError: string | null;
}

export interface AttemptInfo {
  n: number;
  startedAt: string;
  durationMs: number;
  /** The HTTP status, or null when there was none (timeout, refused, a pull consumer). */
  status: number | null;
  error: string | null;
}

export interface DeliveryForward {
  id: string;
  destination: string;
  status: ForwardStatus;
  nextAttemptAt: string | null;
  attempts: AttemptInfo[];
}

/** One row of GET /api/forwards. */
export interface ForwardListItem {
  id: string;
  deliveryId: string;
  destination: string;
  status: ForwardStatus;
}

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

/** A new forward of the delivery to the destination, whatever happened before. */
export async function sendAgain(deliveryId: string, destination: string): Promise<void> {
  await call(`/api/deliveries/${encodeURIComponent(deliveryId)}/forward`, { ...JSON_POST, body: JSON.stringify({ destination }) });
}

export async function setPaused(destination: string, paused: boolean): Promise<void> {
  await call(`/api/destinations/${encodeURIComponent(destination)}/${paused ? 'pause' : 'resume'}`, { method: 'POST' });
}

/** Every failed forward of the destination becomes pending again with a fresh budget; answers how many. */
export async function retryFailed(destination: string): Promise<number> {
  const response = await call('/api/forwards/retry', { ...JSON_POST, body: JSON.stringify({ status: 'failed', destination }) });
  return ((await response.json()) as { retried: number }).retried;
}
