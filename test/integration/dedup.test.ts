import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from '../helpers/app.js';
import {
  accepted,
  countOf,
  deliveriesOf,
  hook,
  refused,
  startWithConfig,
  type HookRequest,
  type Receipt,
} from '../helpers/configured-app.js';
import { RFC3339_UTC_MS } from '../helpers/exchange.js';
import {
  JSON_TYPE,
  githubRequest,
  hmacRequest,
  nowSeconds,
  shopifyRequest,
  slackRequest,
  standardRequest,
  stripeRequest,
  twilioFormRequest,
} from '../helpers/provider-signatures.js';

/**
 * Deduplication over real HTTP (CONTRACT 4): on the provider's delivery id
 * or on a configured header; a repeat answers 200 with the first delivery's
 * id and receivedAt and `duplicate: true`, and is stored once, even when the
 * copies arrive at the same moment; a delivery that failed verification
 * never counts as the first.
 */

const GITHUB = 'github dedup secret';
const STANDARD = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const STRIPE = 'whsec_dedup_secret';
const SHOPIFY = 'shopify dedup secret';
const SLACK = 'slack dedup secret';
const TWILIO = 'twilio dedup token';
const TWILIO_URL = 'https://hooks.example.com/api/webhook/sms';

let server: RunningApp;

beforeAll(async () => {
  server = await startWithConfig({
    sources: {
      github: { verify: { scheme: 'github', secrets: [GITHUB] } },
      'github-too': { verify: { scheme: 'github', secrets: [GITHUB] } },
      'github-keep': { verify: { scheme: 'github', secrets: [GITHUB] }, onFailure: 'keep' },
      app: { verify: { scheme: 'standard-webhooks', secrets: [STANDARD] } },
      stripe: { verify: { scheme: 'stripe', secrets: [STRIPE] } },
      shop: { verify: { scheme: 'shopify', secrets: [SHOPIFY] } },
      slack: { verify: { scheme: 'slack', secrets: [SLACK] } },
      sms: { verify: { scheme: 'twilio', secrets: [TWILIO], publicUrl: TWILIO_URL } },
      orders: { dedup: { header: 'X-Request-Id' } },
      'orders-signed': { verify: { scheme: 'hmac', secrets: ['o'], header: 'X-Signature' }, dedup: { header: 'X-Request-Id' } },
    },
  });
});

afterAll(async () => {
  await server.close();
});

function expectDuplicateOf(repeat: Receipt, first: Receipt): void {
  expect(first.duplicate).toBeUndefined();
  expect(first.receivedAt).toMatch(RFC3339_UTC_MS);
  expect(repeat).toEqual({ id: first.id, source: first.source, receivedAt: first.receivedAt, duplicate: true });
}

function event(): string {
  return JSON.stringify({ id: `evt_${randomUUID()}`, type: 'dedup.test', at: Date.now() });
}

interface ProviderCase {
  name: string;
  source: string;
  /** A delivery carrying the provider id `key`, signed afresh on each call (as a retry is). */
  make: (key: string) => Promise<HookRequest>;
}

const PROVIDERS: ProviderCase[] = [
  {
    name: 'GitHub X-GitHub-Delivery',
    source: 'github',
    make: (key) => githubRequest('{"zen":"Design for failure."}', GITHUB, key),
  },
  {
    name: 'standard-webhooks webhook-id',
    source: 'app',
    make: async (key) => standardRequest(event(), STANDARD, key, nowSeconds()),
  },
  { name: 'Svix svix-id', source: 'app', make: async (key) => standardRequest(event(), STANDARD, key, nowSeconds(), 'svix') },
  {
    name: 'Stripe event id',
    source: 'stripe',
    make: async (key) => stripeRequest(JSON.stringify({ id: key, object: 'event' }), STRIPE, nowSeconds()),
  },
  { name: 'Shopify X-Shopify-Webhook-Id', source: 'shop', make: async (key) => shopifyRequest(event(), SHOPIFY, key) },
  {
    name: 'Slack event_id',
    source: 'slack',
    make: async (key) => slackRequest(JSON.stringify({ type: 'event_callback', event_id: key }), SLACK),
  },
  {
    name: 'Twilio I-Twilio-Idempotency-Token',
    source: 'sms',
    make: async (key) => {
      const request = twilioFormRequest({ MessageSid: 'SM1', Body: 'hi' }, TWILIO, TWILIO_URL);
      return { ...request, headers: { ...request.headers, 'i-twilio-idempotency-token': key } };
    },
  },
  {
    name: 'a configured header on an unverified source',
    source: 'orders',
    make: async (key) => ({ body: event(), headers: { 'content-type': JSON_TYPE, 'x-request-id': key } }),
  },
  {
    name: 'a configured header on a verified source',
    source: 'orders-signed',
    make: async (key) => {
      const request = hmacRequest(event(), 'o', { header: 'x-signature', algorithm: 'sha256', encoding: 'hex' });
      return { ...request, headers: { ...request.headers, 'x-request-id': key } };
    },
  },
];

describe.each(PROVIDERS)('dedup by $name', ({ source, make }) => {
  it('answers a repeat with the first id and receivedAt and duplicate: true, and stores it once', async () => {
    const key = `key-${randomUUID()}`;
    const before = await countOf(server, source);
    const first = await accepted(server, source, await make(key));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const repeat = await accepted(server, source, await make(key));
    expectDuplicateOf(repeat, first);
    const other = await accepted(server, source, await make(`key-${randomUUID()}`));
    expect(other.id).not.toBe(first.id);
    expect(other.duplicate).toBeUndefined();
    expect(await countOf(server, source)).toBe(before + 2);
  });
});

describe('dedup scope', () => {
  it('keeps every delivery of a header source that carries no dedup header', async () => {
    const before = await countOf(server, 'orders');
    const body = JSON.stringify({ same: true });
    const a = await accepted(server, 'orders', { body, headers: { 'content-type': JSON_TYPE } });
    const b = await accepted(server, 'orders', { body, headers: { 'content-type': JSON_TYPE } });
    expect(a.id).not.toBe(b.id);
    expect(b.duplicate).toBeUndefined();
    expect(await countOf(server, 'orders')).toBe(before + 2);
  });

  it('never deduplicates on an empty or blank dedup header: that is no key at all', async () => {
    const before = await countOf(server, 'orders');
    for (const value of ['', ' ', '']) {
      const receipt = await accepted(server, 'orders', {
        body: '{"blank":true}',
        headers: { 'content-type': JSON_TYPE, 'x-request-id': value },
      });
      expect(receipt.duplicate).toBeUndefined();
    }
    expect(await countOf(server, 'orders')).toBe(before + 3);
  });

  it('counts a delivery id per source: the same id on another source is a new delivery', async () => {
    const key = randomUUID();
    const first = await accepted(server, 'github', await githubRequest('{"a":1}', GITHUB, key));
    const elsewhere = await accepted(server, 'github-too', await githubRequest('{"a":1}', GITHUB, key));
    expect(elsewhere.id).not.toBe(first.id);
    expect(elsewhere.duplicate).toBeUndefined();
  });
});

describe('dedup under concurrency', () => {
  it('stores one row for 20 identical GitHub deliveries fired at once; all get 200 with the same id', async () => {
    const request = await githubRequest('{"race":true}', GITHUB, `race-${randomUUID()}`);
    const before = await countOf(server, 'github');
    const answers = await Promise.all(Array.from({ length: 20 }, () => hook(server, 'github', request)));
    for (const answer of answers) expect(answer.status, answer.text).toBe(200);
    const receipts = answers.map((answer) => JSON.parse(answer.text) as Receipt);
    expect(new Set(receipts.map((r) => r.id)).size).toBe(1);
    expect(new Set(receipts.map((r) => r.receivedAt)).size).toBe(1);
    expect(receipts.filter((r) => r.duplicate === undefined)).toHaveLength(1);
    expect(await countOf(server, 'github')).toBe(before + 1);
  });

  it('does the same for a configured dedup header, over separate connections', async () => {
    const key = `race-${randomUUID()}`;
    const before = await countOf(server, 'orders');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        hook(server, 'orders', {
          body: JSON.stringify({ attempt: n }),
          headers: { 'content-type': JSON_TYPE, 'x-request-id': key, connection: 'close' },
        }),
      ),
    );
    for (const answer of answers) expect(answer.status, answer.text).toBe(200);
    expect(new Set(answers.map((a) => (JSON.parse(a.text) as Receipt).id)).size).toBe(1);
    expect(await countOf(server, 'orders')).toBe(before + 1);
  });
});

describe('a delivery that failed verification', () => {
  it('never counts as the first: the valid copy that follows is stored as new', async () => {
    const key = randomUUID();
    const bad = await githubRequest('{"n":1}', 'wrong secret', key);
    await refused(server, 'github-keep', bad, 'signature_invalid');
    const failed = (await deliveriesOf(server, 'github-keep'))[0];
    expect(failed?.verification).toMatchObject({ status: 'failed', scheme: 'github' });

    const good = await githubRequest('{"n":1}', GITHUB, key);
    const first = await accepted(server, 'github-keep', good);
    expect(first.duplicate).toBeUndefined();
    expect(first.id).not.toBe(failed?.id);
    expectDuplicateOf(await accepted(server, 'github-keep', good), first);
  });

  it('is still answered 401 when it repeats the id of a verified delivery, and kept apart', async () => {
    const key = randomUUID();
    const first = await accepted(server, 'github-keep', await githubRequest('{"n":2}', GITHUB, key));
    const before = await countOf(server, 'github-keep');
    const answer = await refused(server, 'github-keep', await githubRequest('{"n":2}', 'wrong secret', key), 'signature_invalid');
    expect(answer.status).toBe(401);
    expect(answer.text).not.toContain(first.id);
    expect(await countOf(server, 'github-keep')).toBe(before + 1);
  });

  it('on a rejecting source, stores nothing and does not block the valid copy', async () => {
    const key = randomUUID();
    await refused(server, 'github', await githubRequest('{"n":3}', 'wrong secret', key), 'signature_invalid');
    const first = await accepted(server, 'github', await githubRequest('{"n":3}', GITHUB, key));
    expect(first.duplicate).toBeUndefined();
  });
});
