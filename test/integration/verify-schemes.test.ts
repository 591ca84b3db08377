import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigFile, SourceConfig, VerifyConfig } from '../../src/config/source-config-schema.js';
import type { RunningApp } from '../helpers/app.js';
import { accepted, countOf, deliveriesOf, refused, startWithConfig } from '../helpers/configured-app.js';
import { readDelivery } from '../helpers/exchange.js';
import {
  FORM_TYPE,
  githubRequest,
  hmacRequest,
  nowSeconds,
  shopifyRequest,
  slackRequest,
  standardRequest,
  stripeRequest,
  twilioFormRequest,
  zoomRequest,
  type SignedRequest,
} from '../helpers/provider-signatures.js';

/**
 * Every scheme over real HTTP: a request signed as the provider signs it is
 * stored as verified; a tampered body, a wrong secret, a missing signature
 * and a timestamp outside the window answer 401 signature_invalid and store
 * nothing; `onFailure: keep` stores the failure and still answers 401; the
 * second of two secrets passes (rotation).
 */

const PUBLIC_BASE = 'https://hooks.example.com/api/webhook/';

interface SchemeCase {
  scheme: VerifyConfig['scheme'];
  /** [old, current]: the source lists both (rotation); its `-keep` twin only the current one. */
  secrets: [string, string];
  wrongSecret: string;
  timestamped: boolean;
  /** Options of the `verify` block besides scheme and secrets. */
  options?: (source: string) => Partial<VerifyConfig>;
  /** A fresh delivery (unique payload and ids) for `source`, signed with `secret`. */
  sign: (source: string, secret: string, timestamp: number) => Promise<SignedRequest>;
}

function event(): string {
  return JSON.stringify({
    id: `evt_${randomUUID()}`,
    object: 'event',
    type: 'test.happened',
    event_id: `Ev${randomUUID()}`,
    data: { n: 1 },
  });
}

const CASES: SchemeCase[] = [
  {
    scheme: 'stripe',
    secrets: ['whsec_old_0123456789abcdef', 'whsec_current_fedcba9876543210'],
    wrongSecret: 'whsec_wrong_0000000000000000',
    timestamped: true,
    sign: async (_source, secret, timestamp) => stripeRequest(event(), secret, timestamp),
  },
  {
    scheme: 'github',
    secrets: ['old github secret', 'current github secret'],
    wrongSecret: 'not the github secret',
    timestamped: false,
    sign: (_source, secret) => githubRequest(event(), secret, randomUUID()),
  },
  {
    scheme: 'standard-webhooks',
    secrets: ['whsec_b2xkIHNlY3JldCBvbGQgc2VjcmV0IG9sZA==', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    wrongSecret: 'whsec_d3Jvbmcgd3Jvbmcgd3Jvbmcgd3Jvbmc=',
    timestamped: true,
    sign: async (_source, secret, timestamp) => standardRequest(event(), secret, `msg_${randomUUID()}`, timestamp),
  },
  {
    scheme: 'shopify',
    secrets: ['shpss_old', 'shpss_current'],
    wrongSecret: 'shpss_wrong',
    timestamped: false,
    sign: async (_source, secret) => shopifyRequest(event(), secret, randomUUID()),
  },
  {
    scheme: 'slack',
    secrets: ['8f742231b10e8888abcd99yyyzzz85a5', '0ld5ecret0ld5ecret0ld5ecret0ld5e'],
    wrongSecret: 'wrongwrongwrongwrongwrongwrong00',
    timestamped: true,
    sign: async (_source, secret, timestamp) => slackRequest(event(), secret, timestamp),
  },
  {
    scheme: 'twilio',
    secrets: ['twilio-old-auth-token', 'twilio-current-auth-token'],
    wrongSecret: 'twilio-wrong-auth-token',
    timestamped: false,
    options: (source) => ({ publicUrl: `${PUBLIC_BASE}${source}` }),
    sign: async (source, secret) =>
      twilioFormRequest(
        {
          MessageSid: `SM${randomUUID().replaceAll('-', '')}`,
          From: '+14158675309',
          To: '+18005551212',
          Body: 'Hello & ünïcode',
        },
        secret,
        `${PUBLIC_BASE}${source}`,
      ),
  },
  {
    scheme: 'zoom',
    secrets: ['zoom-old-secret-token', 'zoom-current-secret-token'],
    wrongSecret: 'zoom-wrong-secret-token',
    timestamped: true,
    sign: async (_source, secret, timestamp) => zoomRequest(event(), secret, timestamp),
  },
  {
    scheme: 'hmac',
    secrets: ['hmac-old', 'hmac-current'],
    wrongSecret: 'hmac-wrong',
    timestamped: false,
    options: () => ({ header: 'X-Signature', algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' }),
    sign: async (_source, secret) =>
      hmacRequest(event(), secret, { header: 'x-signature', algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' }),
  },
];

function config(): ConfigFile {
  const sources: Record<string, SourceConfig> = {};
  for (const c of CASES) {
    const keep = `${c.scheme}-keep`;
    sources[c.scheme] = { verify: { scheme: c.scheme, secrets: [...c.secrets], ...c.options?.(c.scheme) } };
    sources[keep] = { verify: { scheme: c.scheme, secrets: [c.secrets[1]], ...c.options?.(keep) }, onFailure: 'keep' };
  }
  return { sources };
}

/** The same request with its body changed after signing. */
function tampered(request: SignedRequest): SignedRequest {
  const form = request.headers['content-type'] === FORM_TYPE;
  const body = form ? `${request.body}&Extra=1` : `${request.body.slice(0, -1)},"extra":1}`;
  return { ...request, body };
}

/** The same request without the headers that carry a signature. */
function unsigned(request: SignedRequest): SignedRequest {
  const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !/signature|hmac/i.test(name)));
  return { ...request, headers };
}

let server: RunningApp;

beforeAll(async () => {
  server = await startWithConfig(config());
});

afterAll(async () => {
  await server.close();
});

describe.each(CASES)('$scheme', (c) => {
  const source = c.scheme;
  const keep = `${c.scheme}-keep`;
  const [oldSecret, currentSecret] = c.secrets;

  it('stores a request signed with the current secret as verified, body and all', async () => {
    const request = await c.sign(source, currentSecret, nowSeconds());
    const receipt = await accepted(server, source, request);
    const delivery = await readDelivery(server, receipt.id);
    expect(delivery.verification).toEqual({ status: 'verified', scheme: c.scheme });
    expect(delivery.source).toBe(source);
    const raw = await fetch(`${server.url}/api/deliveries/${receipt.id}/raw`, { headers: server.auth });
    expect(await raw.text()).toBe(request.body);
  });

  it('accepts the other listed secret too (rotation)', async () => {
    const receipt = await accepted(server, source, await c.sign(source, oldSecret, nowSeconds()));
    expect((await readDelivery(server, receipt.id)).verification).toEqual({ status: 'verified', scheme: c.scheme });
  });

  it('refuses a tampered body, a wrong secret and a missing signature with 401, storing nothing', async () => {
    const before = await countOf(server, source);
    const good = await c.sign(source, currentSecret, nowSeconds());
    const answers = [
      await refused(server, source, tampered(good), 'signature_invalid'),
      await refused(server, source, await c.sign(source, c.wrongSecret, nowSeconds()), 'signature_invalid'),
      await refused(server, source, unsigned(good), 'signature_invalid'),
    ];
    for (const answer of answers) expect(answer.status).toBe(401);
    // The detail says which check failed, never the secret or the signature expected.
    const details = answers.map((answer) => (JSON.parse(answer.text) as { detail: string }).detail);
    expect(details[1]).toBe(
      `The ${c.scheme} signature check failed: no signature matches any of this source's secrets (check the secret, and that the body reached Reception unchanged).`,
    );
    expect(details[2]).toBe(`The ${c.scheme} signature check failed: the request carries no signature header.`);
    for (const detail of details) expect(detail).not.toContain(currentSecret);
    expect(await countOf(server, source)).toBe(before);
    // The untouched request still passes: the refusals were about the changes.
    await accepted(server, source, good);
  });

  it('with onFailure keep: answers 401 yet stores the delivery as failed, with the reason', async () => {
    const before = await deliveriesOf(server, keep);
    const request = await c.sign(keep, c.wrongSecret, nowSeconds());
    const answer = await refused(server, keep, request, 'signature_invalid');
    expect(answer.status).toBe(401);
    expect((JSON.parse(answer.text) as { detail: string }).detail).toMatch(
      /: no signature matches any of this source's secrets .*\. The delivery was kept, as failed\.$/,
    );
    const after = await deliveriesOf(server, keep);
    expect(after).toHaveLength(before.length + 1);
    const kept = after[0];
    expect(kept?.verification).toEqual({ status: 'failed', scheme: c.scheme, reason: 'signature_mismatch' });
    const raw = await fetch(`${server.url}/api/deliveries/${kept?.id ?? ''}/raw`, { headers: server.auth });
    expect(await raw.text()).toBe(request.body);
    // A good one on the same source is stored as verified.
    const receipt = await accepted(server, keep, await c.sign(keep, currentSecret, nowSeconds()));
    expect((await readDelivery(server, receipt.id)).verification).toEqual({ status: 'verified', scheme: c.scheme });
  });
});

describe.each(CASES.filter((c) => c.timestamped))('$scheme timestamps', (c) => {
  const source = c.scheme;
  const currentSecret = c.secrets[1];

  it('refuses a timestamp ten minutes old or ten minutes ahead (default tolerance 300 s)', async () => {
    const before = await countOf(server, source);
    for (const offset of [-600, 600]) {
      const answer = await refused(
        server,
        source,
        await c.sign(source, currentSecret, nowSeconds() + offset),
        'signature_invalid',
      );
      expect(answer.status).toBe(401);
      expect((JSON.parse(answer.text) as { detail: string }).detail).toBe(
        `The ${c.scheme} signature check failed: the timestamp is outside the tolerance (an old delivery replayed, or a clock that is off).`,
      );
    }
    expect(await countOf(server, source)).toBe(before);
    await accepted(server, source, await c.sign(source, currentSecret, nowSeconds() - 60));
  });
});
