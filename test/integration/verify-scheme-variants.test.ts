import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigFile, SourceConfig } from '../../src/config/source-config-schema.js';
import type { RunningApp } from '../helpers/app.js';
import { accepted, countOf, hook, refused, startWithConfig, type HookRequest } from '../helpers/configured-app.js';
import { readDelivery, send } from '../helpers/exchange.js';
import {
  FORM_TYPE,
  JSON_TYPE,
  githubRequest,
  hmacRequest,
  nowSeconds,
  standardRequest,
  stripeRequest,
  twilioFormRequest,
  twilioJsonRequest,
  type HmacStyle,
} from '../helpers/provider-signatures.js';

/**
 * The parts of each scheme that a plain sign-and-send does not reach, over
 * real HTTP: Svix header names and signature lists (Standard Webhooks),
 * several `v1` entries (Stripe), junk after a valid signature, the request's
 * own query and the published vectors (Twilio), and every algorithm and
 * encoding of the generic HMAC scheme.
 */

const STANDARD_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const STRIPE_SECRET = 'whsec_variants_0123456789';
const GITHUB_SECRET = "It's a Secret to Everybody";
const TWILIO_TOKEN = 'twilio-variants-token';
const TWILIO_URL = 'https://hooks.example.com/api/webhook/sms';
const PARAMS = { MessageSid: 'SM0123456789abcdef', From: '+14158675309', Body: 'Ahoy' };

const HMAC_STYLES: HmacStyle[] = ['sha1', 'sha256', 'sha512'].flatMap((algorithm) =>
  ['hex', 'base64'].map(
    (encoding) =>
      ({
        header: 'X-Hook-Signature',
        algorithm,
        encoding,
        prefix: `${algorithm}=`,
      }) as HmacStyle,
  ),
);
const hmacSource = (style: HmacStyle): string => `hmac-${style.algorithm}-${style.encoding}`;

function config(): ConfigFile {
  const sources: Record<string, SourceConfig> = {
    app: { verify: { scheme: 'standard-webhooks', secrets: [STANDARD_SECRET] } },
    stripe: { verify: { scheme: 'stripe', secrets: [STRIPE_SECRET] } },
    github: { verify: { scheme: 'github', secrets: [GITHUB_SECRET] } },
    sms: { verify: { scheme: 'twilio', secrets: [TWILIO_TOKEN], publicUrl: TWILIO_URL } },
    'sms-port': {
      verify: { scheme: 'twilio', secrets: [TWILIO_TOKEN], publicUrl: 'https://hooks.example.com:443/api/webhook/sms-port' },
    },
    'twilio-vector': { verify: { scheme: 'twilio', secrets: ['12345'], publicUrl: 'https://mycompany.com/myapp.php' } },
    'hmac-plain': { verify: { scheme: 'hmac', secrets: ['plain'], header: 'X-Sig' } },
  };
  for (const style of HMAC_STYLES) {
    sources[hmacSource(style)] = { verify: { scheme: 'hmac', secrets: ['hmac-secret'], ...style } };
  }
  return { sources };
}

function event(): string {
  return JSON.stringify({ id: `evt_${randomUUID()}`, type: 'variant.test' });
}

let server: RunningApp;

beforeAll(async () => {
  server = await startWithConfig(config());
});

afterAll(async () => {
  await server.close();
});

async function expectVerified(source: string, request: HookRequest, scheme: string): Promise<void> {
  const receipt = await accepted(server, source, request);
  expect((await readDelivery(server, receipt.id)).verification).toEqual({ status: 'verified', scheme });
}

async function expectRefused(source: string, requests: HookRequest[]): Promise<void> {
  const before = await countOf(server, source);
  for (const request of requests) {
    const answer = await refused(server, source, request, 'signature_invalid');
    expect(answer.status).toBe(401);
  }
  expect(await countOf(server, source)).toBe(before);
}

describe('standard-webhooks', () => {
  it("accepts Svix's svix-* header names and refuses them tampered", async () => {
    const request = standardRequest(event(), STANDARD_SECRET, `msg_${randomUUID()}`, nowSeconds(), 'svix');
    expect(Object.keys(request.headers)).toContain('svix-signature');
    await expectVerified('app', request, 'standard-webhooks');
    const other = standardRequest(event(), STANDARD_SECRET, `msg_${randomUUID()}`, nowSeconds(), 'svix');
    await expectRefused('app', [{ ...other, body: other.body.replace('variant', 'tampered') }]);
  });

  it('accepts a list where one v1 entry matches among junk and other versions, and two header lines', async () => {
    const request = standardRequest(event(), STANDARD_SECRET, `msg_${randomUUID()}`);
    const good = request.headers['webhook-signature'] ?? '';
    const bad = `v1,${Buffer.alloc(32, 7).toString('base64')}`;
    await expectVerified(
      'app',
      { ...request, headers: { ...request.headers, 'webhook-signature': `${bad} v1a,AAAA ${good}` } },
      'standard-webhooks',
    );

    const again = standardRequest(event(), STANDARD_SECRET, `msg_${randomUUID()}`);
    const lines = await send(server, {
      path: '/api/webhook/app',
      headers: { ...again.headers, 'webhook-signature': [bad, again.headers['webhook-signature'] ?? ''] },
      body: again.body,
    });
    expect(lines.status, lines.text).toBe(200);

    const only = standardRequest(event(), STANDARD_SECRET, `msg_${randomUUID()}`);
    await expectRefused('app', [
      {
        ...only,
        headers: { ...only.headers, 'webhook-signature': `${bad} v1a,${(only.headers['webhook-signature'] ?? '').slice(3)}` },
      },
      { ...only, headers: { ...only.headers, 'webhook-signature': `${only.headers['webhook-signature'] ?? ''}zz` } },
    ]);
  });
});

describe('stripe', () => {
  it('accepts a header with several v1 entries when one matches; refuses v0 only and junk appended', async () => {
    const request = stripeRequest(event(), STRIPE_SECRET);
    const header = request.headers['stripe-signature'] ?? '';
    const foreign = createHmac('sha256', 'whsec_other').update('x').digest('hex');
    await expectVerified(
      'stripe',
      { ...request, headers: { ...request.headers, 'stripe-signature': `${header},v1=${foreign}` } },
      'stripe',
    );

    const next = stripeRequest(event(), STRIPE_SECRET);
    const nextHeader = next.headers['stripe-signature'] ?? '';
    await expectRefused('stripe', [
      { ...next, headers: { ...next.headers, 'stripe-signature': nextHeader.replace('v1=', 'v0=') } },
      { ...next, headers: { ...next.headers, 'stripe-signature': `${nextHeader}zz` } },
      { ...next, headers: { ...next.headers, 'stripe-signature': 'garbage' } },
    ]);
  });
});

describe('github', () => {
  it('refuses junk after a valid signature and the SHA-1 header alone (no downgrade)', async () => {
    const request = await githubRequest(event(), GITHUB_SECRET, randomUUID());
    const signature = request.headers['x-hub-signature-256'] ?? '';
    const withoutSha256 = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name !== 'x-hub-signature-256'));
    await expectRefused('github', [
      { ...request, headers: { ...request.headers, 'x-hub-signature-256': `${signature}zz` } },
      { ...request, headers: { ...request.headers, 'x-hub-signature-256': signature.slice(0, -2) } },
      {
        ...request,
        headers: {
          ...withoutSha256,
          'x-hub-signature': `sha1=${createHmac('sha1', GITHUB_SECRET).update(request.body).digest('hex')}`,
        },
      },
    ]);
    await expectVerified('github', request, 'github');
  });
});

describe('twilio', () => {
  it("signs publicUrl plus the request's own query (form body), and keeps the query", async () => {
    const request = twilioFormRequest(PARAMS, TWILIO_TOKEN, TWILIO_URL, 'tenant=acme&flow=2');
    const receipt = await accepted(server, 'sms', request);
    const delivery = await readDelivery(server, receipt.id);
    expect(delivery.verification).toEqual({ status: 'verified', scheme: 'twilio' });
    expect(delivery.query).toBe('tenant=acme&flow=2');
    expect(delivery.body).toEqual(PARAMS);
  });

  it('refuses a query the signature does not cover, or one it covers but the request lacks', async () => {
    const withoutQuery = twilioFormRequest(PARAMS, TWILIO_TOKEN, TWILIO_URL);
    const withQuery = twilioFormRequest(PARAMS, TWILIO_TOKEN, TWILIO_URL, 'tenant=acme');
    await expectRefused('sms', [
      { ...withoutQuery, query: 'tenant=acme' },
      { ...withQuery, query: '' },
      { ...withQuery, body: `${withQuery.body}&Extra=1` },
    ]);
  });

  it('accepts JSON bodies carried by bodySHA256, with a query of their own, and refuses them tampered', async () => {
    const payload = JSON.stringify({ sid: `EV${randomUUID()}`, status: 'delivered' });
    const request = twilioJsonRequest(payload, TWILIO_TOKEN, TWILIO_URL, 'tenant=acme');
    await expectVerified('sms', request, 'twilio');
    const other = twilioJsonRequest(JSON.stringify({ sid: 'EV2', status: 'failed' }), TWILIO_TOKEN, TWILIO_URL);
    await expectRefused('sms', [
      { ...other, body: other.body.replace('failed', 'delivered') },
      { ...other, query: (other.query ?? '').replace(/bodySHA256=[0-9a-f]+/, `bodySHA256=${'0'.repeat(64)}`) },
      { ...other, query: '' },
    ]);
  });

  it('matches the published vectors, form and JSON', async () => {
    const form = new URLSearchParams({
      CallSid: 'CA1234567890ABCDE',
      Caller: '+14158675309',
      Digits: '1234',
      From: '+14158675309',
      To: '+18005551212',
    }).toString();
    await expectVerified(
      'twilio-vector',
      {
        query: 'foo=1&bar=2',
        body: form,
        headers: { 'content-type': FORM_TYPE, 'x-twilio-signature': 'RSOYDt4T1cUTdK1PDd93/VVr8B8=' },
      },
      'twilio',
    );
    await expectVerified(
      'twilio-vector',
      {
        query: 'foo=1&bar=2&bodySHA256=0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620',
        body: '{"property": "value", "boolean": true}',
        headers: { 'content-type': JSON_TYPE, 'x-twilio-signature': 'a9nBmqA0ju/hNViExpshrM61xv4=' },
      },
      'twilio',
    );
  });

  it('accepts a signature over the URL without :443 when publicUrl names the port, and the reverse', async () => {
    await expectVerified(
      'sms-port',
      twilioFormRequest(PARAMS, TWILIO_TOKEN, 'https://hooks.example.com/api/webhook/sms-port'),
      'twilio',
    );
    await expectVerified(
      'sms-port',
      twilioFormRequest(PARAMS, TWILIO_TOKEN, 'https://hooks.example.com:443/api/webhook/sms-port'),
      'twilio',
    );
    await expectVerified(
      'sms',
      twilioFormRequest(PARAMS, TWILIO_TOKEN, 'https://hooks.example.com:443/api/webhook/sms'),
      'twilio',
    );
  });
});

describe('hmac', () => {
  it.each(HMAC_STYLES)(
    '$algorithm $encoding with prefix: verified, and refused with junk, no prefix or another algorithm',
    async (style) => {
      const source = hmacSource(style);
      await expectVerified(source, hmacRequest(event(), 'hmac-secret', style), 'hmac');
      const request = hmacRequest(event(), 'hmac-secret', style);
      const value = request.headers[style.header] ?? '';
      const otherAlgorithm = style.algorithm === 'sha256' ? 'sha512' : 'sha256';
      await expectRefused(source, [
        { ...request, headers: { ...request.headers, [style.header]: `${value}zz` } },
        { ...request, headers: { ...request.headers, [style.header]: value.slice(style.prefix?.length ?? 0) } },
        hmacRequest(request.body, 'hmac-secret', { ...style, algorithm: otherAlgorithm }),
        hmacRequest(request.body, 'hmac-secret', { ...style, encoding: style.encoding === 'hex' ? 'base64' : 'hex' }),
      ]);
    },
  );

  it('without a prefix, sha256 hex by default; the header name is case-insensitive', async () => {
    await expectVerified(
      'hmac-plain',
      hmacRequest(event(), 'plain', { header: 'x-sig', algorithm: 'sha256', encoding: 'hex' }),
      'hmac',
    );
    const answer = await hook(
      server,
      'hmac-plain',
      hmacRequest(event(), 'plain', { header: 'x-sig', algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' }),
    );
    expect(answer.status).toBe(401);
  });
});
