import { expect } from 'vitest';
import type { AppDeps } from '../../src/app.js';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import { validateConfig } from '../../src/config/source-config.js';
import { SourceRules } from '../../src/receive/source-rules.js';
import { startApp, type RunningApp } from './app.js';
import { readJson, type DeliveryView, type Receipt, type SourceView } from './exchange.js';
import type { SignedRequest } from './provider-signatures.js';

export const DEFAULT_POLICY = { maxBodyBytes: 5 * 1024 * 1024, anyJson: false };

/**
 * The real app with the rules of a config file, on loopback. The config
 * must validate exactly as a file with the same content would.
 */
export async function startWithConfig(config: ConfigFile, overrides: Partial<AppDeps> = {}): Promise<RunningApp> {
  expect(validateConfig(config)).toEqual([]);
  return startApp({ ...overrides, rules: SourceRules.fromConfig(config, DEFAULT_POLICY) });
}

export interface HookAnswer {
  status: number;
  headers: Headers;
  text: string;
}

export interface HookRequest extends Partial<SignedRequest> {
  method?: string;
}

/** One request to `/api/webhook/{source}` with `fetch`, the query and headers as given. */
export async function hook(server: RunningApp, source: string, request: HookRequest = {}): Promise<HookAnswer> {
  const query = request.query === undefined || request.query === '' ? '' : `?${request.query}`;
  const res = await fetch(`${server.url}/api/webhook/${encodeURIComponent(source)}${query}`, {
    method: request.method ?? 'POST',
    headers: request.headers ?? {},
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

export type { Receipt };

/** Sends and insists on 200; answers the receipt. */
export async function accepted(server: RunningApp, source: string, request: HookRequest): Promise<Receipt> {
  const answer = await hook(server, source, request);
  expect(answer.status, answer.text).toBe(200);
  return JSON.parse(answer.text) as Receipt;
}

/** Sends and insists on a problem answer with this code. */
export async function refused(server: RunningApp, source: string, request: HookRequest, code: string): Promise<HookAnswer> {
  const answer = await hook(server, source, request);
  expect(answer.headers.get('content-type'), answer.text).toMatch(/^application\/problem\+json/);
  expect(JSON.parse(answer.text), answer.text).toMatchObject({ code });
  return answer;
}

/** How many deliveries one source holds, as `/api/sources` tells it (0 when it has none). */
export async function countOf(server: RunningApp, source: string): Promise<number> {
  const { items } = await readJson<{ items: SourceView[] }>(server, '/api/sources');
  return items.find((item) => item.source === source)?.count ?? 0;
}

/** A source's deliveries, newest first (one page of up to 500). */
export async function deliveriesOf(server: RunningApp, source: string): Promise<DeliveryView[]> {
  const page = await readJson<{ items: DeliveryView[] }>(
    server,
    `/api/deliveries?source=${encodeURIComponent(source)}&limit=500`,
  );
  return page.items;
}

/** The Prometheus text of `/metrics`. */
export async function metricsText(server: RunningApp): Promise<string> {
  const res = await fetch(`${server.url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}
