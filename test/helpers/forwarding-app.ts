import type { Static } from 'typebox';
import { expect } from 'vitest';
import type { AppDeps } from '../../src/app.js';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import { validateConfig } from '../../src/config/source-config.js';
import type { DeliveryForwardsSchema } from '../../src/api/forward-schemas.js';
import { resolveDestinations } from '../../src/forwarding/destination.js';
import { SourceRules } from '../../src/receive/source-rules.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import { startAppOnKind, type RunningApp, type StoreKind } from './app.js';
import { requirePostgres } from './postgres.js';

export const STORES: StoreKind[] = ['sqlite', 'postgres'];

/** The real app with a config file's sources and destinations, on the store named. */
export async function startForwarding(
  kind: StoreKind,
  config: ConfigFile,
  overrides: Partial<AppDeps> = {},
): Promise<RunningApp<InboxDatabase>> {
  expect(validateConfig(config)).toEqual([]);
  return startAppOnKind(kind, {
    rules: SourceRules.fromConfig(config, { maxBodyBytes: 5 * 1024 * 1024, anyJson: false }),
    destinations: resolveDestinations(config.destinations),
    ...overrides,
  });
}

/** True when the suite for this store can run (PostgreSQL skipped loudly locally, a failure under CI). */
export async function storeAvailable(kind: StoreKind, suite: string): Promise<boolean> {
  return kind === 'sqlite' || requirePostgres(suite);
}

/** POSTs JSON to a source and insists on 200; answers the delivery id. */
export async function send(
  server: RunningApp<InboxDatabase>,
  source: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const res = await fetch(`${server.url}/api/webhook/${encodeURIComponent(source)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return (JSON.parse(text) as { id: string }).id;
}

export async function api<T>(
  server: RunningApp<InboxDatabase>,
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<{ status: number; json: T }> {
  const res = await fetch(`${server.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { ...server.auth, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await res.text();
  return { status: res.status, json: (text === '' ? null : JSON.parse(text)) as T };
}

/** One forward of `GET /api/deliveries/{id}/forwards`, typed from the API's schema. */
export type ForwardView = Static<typeof DeliveryForwardsSchema>['items'][number];

export async function forwardsOf(server: RunningApp<InboxDatabase>, deliveryId: string): Promise<ForwardView[]> {
  const { status, json } = await api<Static<typeof DeliveryForwardsSchema>>(server, `/api/deliveries/${deliveryId}/forwards`);
  expect(status).toBe(200);
  return json.items;
}
