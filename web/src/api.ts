// The inbox API as the page uses it. The session cookie (HttpOnly,
// SameSite=Strict) rides along on every same-origin request; the page never
// sees or stores the token itself.

import type { Delivery, DeliveryCount, DeliveryPage, EventTypeList, SourcePage } from './delivery.ts';
import type { Filters } from './route.ts';

export type { Delivery, DeliveryPage, EventTypeList, SourcePage, SourceSummary, Verification } from './delivery.ts';

/** The server said 401: the session is gone (logged out elsewhere, token changed). */
export class Unauthorized extends Error {
  constructor() {
    super('Not logged in');
    this.name = 'Unauthorized';
  }
}

/** Any other refusal, with the problem+json `code` and `detail` when there is one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

let onUnauthorized: () => void = () => undefined;

/** Called whenever an API call answers 401 (or 429), before the call throws `Unauthorized`. */
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

export async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(path, {
    credentials: 'same-origin',
    cache: 'no-store',
    ...init,
    headers: { accept: 'application/json', ...init.headers },
  });
  // 429 on a read is a wrong session cookie from an address that presented
  // too many wrong tokens (no read is rate-limited otherwise): log in again.
  if (response.status === 401 || response.status === 429) {
    onUnauthorized();
    throw new Unauthorized();
  }
  if (!response.ok) throw await problem(response);
  return response;
}

async function problem(response: Response): Promise<ApiError> {
  try {
    const body = (await response.json()) as { code?: unknown; detail?: unknown };
    const code = typeof body.code === 'string' ? body.code : 'error';
    const detail = typeof body.detail === 'string' ? body.detail : `The server answered ${response.status}.`;
    return new ApiError(response.status, code, detail);
  } catch {
    return new ApiError(response.status, 'error', `The server answered ${response.status}.`);
  }
}

function query(params: { [name: string]: string | number | undefined }): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) search.set(key, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

function deliveryPath(id: string): string {
  return `/api/deliveries/${encodeURIComponent(id)}`;
}

/** Exchanges the token for the session cookie. False when the token is wrong. */
export async function logIn(token: string): Promise<boolean> {
  const response = await fetch('/api/session', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ token }),
  });
  if (response.status === 401) return false;
  if (!response.ok) throw await problem(response);
  return true;
}

export async function logOut(): Promise<void> {
  await fetch('/api/session', { method: 'DELETE', credentials: 'same-origin' });
}

/** A page of sources by name; `q` keeps the names that contain it, ignoring case. */
export async function listSources(
  options: { q?: string; cursor?: string; limit?: number; traffic?: '24h' } = {},
): Promise<SourcePage> {
  const response = await call(`/api/sources${query(options)}`);
  return (await response.json()) as SourcePage;
}

/** A page of the list, newest first, with the filters (CONTRACT 8). */
export async function listDeliveries(options: Filters & { cursor?: string; limit?: number }): Promise<DeliveryPage> {
  const response = await call(`/api/deliveries${query({ ...options })}`);
  return (await response.json()) as DeliveryPage;
}

/** How many deliveries the filters match (counted up to a bound: `atLeast`). */
export async function countDeliveries(filters: Filters): Promise<DeliveryCount> {
  const response = await call(`/api/deliveries/count${query({ ...filters })}`);
  return (await response.json()) as DeliveryCount;
}

/** Deletes every delivery the filters match; how many went. */
export async function deleteMatching(filters: Filters): Promise<number> {
  const response = await call(`/api/deliveries${query({ ...filters })}`, { method: 'DELETE' });
  return ((await response.json()) as { deleted: number }).deleted;
}

/** A source's deliveries per event type, the most frequent first. */
export async function listEventTypes(source: string): Promise<EventTypeList> {
  const response = await call(`/api/event-types${query({ source, limit: 100 })}`);
  return (await response.json()) as EventTypeList;
}

/** One delivery, or undefined when no delivery has that id. */
export async function getDelivery(id: string): Promise<Delivery | undefined> {
  try {
    const response = await call(deliveryPath(id));
    return (await response.json()) as Delivery;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return undefined;
    throw error;
  }
}

/** The body bytes exactly as received. */
export async function getRawBody(id: string): Promise<Uint8Array> {
  const response = await call(`${deliveryPath(id)}/raw`, { headers: { accept: '*/*' } });
  return new Uint8Array(await response.arrayBuffer());
}

/** The address of the raw body; the server sends it as an attachment. */
export function rawBodyUrl(id: string): string {
  return `${deliveryPath(id)}/raw`;
}

/** The address of one file of a multipart delivery (`index` in its body.files); the server sends it as an attachment. */
export function fileUrl(id: string, index: number): string {
  return `${deliveryPath(id)}/files/${index}`;
}

/** True when it was deleted, false when it was already gone. */
export async function deleteDelivery(id: string): Promise<boolean> {
  try {
    await call(deliveryPath(id), { method: 'DELETE' });
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return false;
    throw error;
  }
}
