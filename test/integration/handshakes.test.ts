import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from '../helpers/app.js';
import { accepted, countOf, hook, refused, startWithConfig, type HookAnswer } from '../helpers/configured-app.js';
import { readDelivery } from '../helpers/exchange.js';
import { JSON_TYPE, githubRequest, nowSeconds, slackRequest, zoomRequest } from '../helpers/provider-signatures.js';

/**
 * Each handshake over real HTTP (CONTRACT 4): answered as the provider
 * expects, checked against the source's signature where it has one, and
 * never stored.
 */

const SLACK_SECRET = 'slack-signing-secret';
const META_APP_SECRET = 'meta-app-secret';
const META_TOKEN = 'meta-verify-token';
const ZOOM_OLD = 'zoom-old-secret-token';
const ZOOM_NEW = 'zoom-new-secret-token';
const ZOOM_PLAIN = 'zoom-plain-secret-token';
const X_SECRET = 'x-consumer-secret';

let server: RunningApp;

beforeAll(async () => {
  server = await startWithConfig({
    sources: {
      slack: { verify: { scheme: 'slack', secrets: [SLACK_SECRET] }, handshake: { type: 'slack' } },
      meta: { verify: { scheme: 'github', secrets: [META_APP_SECRET] }, handshake: { type: 'meta', verifyToken: META_TOKEN } },
      zoom: { verify: { scheme: 'zoom', secrets: [ZOOM_OLD, ZOOM_NEW] }, handshake: { type: 'zoom' } },
      'zoom-plain': { handshake: { type: 'zoom', secret: ZOOM_PLAIN } },
      graph: { handshake: { type: 'graph' } },
      x: {
        verify: {
          scheme: 'hmac',
          secrets: [X_SECRET],
          header: 'X-Twitter-Webhooks-Signature',
          algorithm: 'sha256',
          encoding: 'base64',
          prefix: 'sha256=',
        },
        handshake: { type: 'x', secret: X_SECRET },
      },
      plain: {},
    },
  });
});

afterAll(async () => {
  await server.close();
});

function json(answer: HookAnswer): unknown {
  expect(answer.headers.get('content-type'), answer.text).toMatch(/^application\/json/);
  return JSON.parse(answer.text);
}

describe('Slack url_verification', () => {
  const challenge = () =>
    JSON.stringify({
      token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
      challenge: `3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P-${randomUUID()}`,
      type: 'url_verification',
    });

  it('answers the challenge of a signed request, and stores nothing', async () => {
    const body = challenge();
    const answer = await hook(server, 'slack', slackRequest(body, SLACK_SECRET));
    expect(answer.status, answer.text).toBe(200);
    expect(json(answer)).toEqual({ challenge: (JSON.parse(body) as { challenge: string }).challenge });
    expect(await countOf(server, 'slack')).toBe(0);
  });

  it('refuses a badly signed, stale or unsigned challenge with 401', async () => {
    const body = challenge();
    await refused(server, 'slack', slackRequest(body, 'not-the-secret'), 'signature_invalid');
    await refused(server, 'slack', slackRequest(body, SLACK_SECRET, nowSeconds() - 3600), 'signature_invalid');
    await refused(server, 'slack', { body, headers: { 'content-type': JSON_TYPE } }, 'signature_invalid');
    expect(await countOf(server, 'slack')).toBe(0);
  });

  it('stores the signed events that follow, as verified', async () => {
    const event = JSON.stringify({ type: 'event_callback', event_id: `Ev${randomUUID()}`, event: { type: 'app_mention' } });
    const receipt = await accepted(server, 'slack', slackRequest(event, SLACK_SECRET));
    expect((await readDelivery(server, receipt.id)).verification).toEqual({ status: 'verified', scheme: 'slack' });
  });
});

describe('Meta hub.challenge', () => {
  const query = (token: string, challenge: string) =>
    new URLSearchParams({
      'hub.mode': 'subscribe',
      'hub.verify_token': token,
      'hub.challenge': challenge,
    }).toString();

  it('answers the challenge as text when the verify token matches', async () => {
    const answer = await hook(server, 'meta', { method: 'GET', query: query(META_TOKEN, '1158201444') });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(answer.text).toBe('1158201444');
  });

  it('answers 403 handshake_failed when the token does not match, or is missing', async () => {
    const wrong = await refused(server, 'meta', { method: 'GET', query: query('guess', '1158201444') }, 'handshake_failed');
    expect(wrong.status).toBe(403);
    expect(wrong.text).not.toContain('1158201444');
    const missing = await refused(
      server,
      'meta',
      { method: 'GET', query: 'hub.mode=subscribe&hub.challenge=42' },
      'handshake_failed',
    );
    expect(missing.status).toBe(403);
  });

  it('answers other GETs 405, and stores the signed POSTs that follow', async () => {
    const other = await refused(server, 'meta', { method: 'GET', query: 'hello=1' }, 'method_not_allowed');
    expect(other.status).toBe(405);
    expect(other.headers.get('allow')).toBe('GET, POST');
    expect(await countOf(server, 'meta')).toBe(0);
    const receipt = await accepted(
      server,
      'meta',
      await githubRequest(JSON.stringify({ object: 'page', entry: [] }), META_APP_SECRET, randomUUID()),
    );
    expect((await readDelivery(server, receipt.id)).verification).toEqual({ status: 'verified', scheme: 'github' });
  });
});

describe('Zoom endpoint.url_validation', () => {
  const validation = (plainToken: string) =>
    JSON.stringify({
      payload: { plainToken },
      event_ts: Date.now(),
      event: 'endpoint.url_validation',
    });
  const encrypted = (secret: string, plainToken: string) => createHmac('sha256', secret).update(plainToken).digest('hex');

  it('answers plainToken and its HMAC-SHA256 hex when signed, and stores nothing', async () => {
    const plainToken = 'qgg8vlvZRS6UYooatFL8Aw';
    const answer = await hook(server, 'zoom', zoomRequest(validation(plainToken), ZOOM_OLD));
    expect(answer.status, answer.text).toBe(200);
    expect(json(answer)).toEqual({ plainToken, encryptedToken: encrypted(ZOOM_OLD, plainToken) });
    expect(await countOf(server, 'zoom')).toBe(0);
  });

  it('during a rotation, answers with the secret that signed the request', async () => {
    const plainToken = 'rotated-plain-token';
    const answer = await hook(server, 'zoom', zoomRequest(validation(plainToken), ZOOM_NEW));
    expect(answer.status, answer.text).toBe(200);
    expect(json(answer)).toEqual({ plainToken, encryptedToken: encrypted(ZOOM_NEW, plainToken) });
  });

  it('refuses an unsigned, wrongly signed or tampered validation with 401', async () => {
    const body = validation('abc');
    await refused(server, 'zoom', { body, headers: { 'content-type': JSON_TYPE } }, 'signature_invalid');
    await refused(server, 'zoom', zoomRequest(body, 'guess'), 'signature_invalid');
    const signed = zoomRequest(body, ZOOM_OLD);
    await refused(server, 'zoom', { ...signed, body: validation('abd') }, 'signature_invalid');
    expect(await countOf(server, 'zoom')).toBe(0);
  });

  it('on a source that does not verify, answers with the handshake secret', async () => {
    const answer = await hook(server, 'zoom-plain', { body: validation('plain-token'), headers: { 'content-type': JSON_TYPE } });
    expect(answer.status, answer.text).toBe(200);
    expect(json(answer)).toEqual({ plainToken: 'plain-token', encryptedToken: encrypted(ZOOM_PLAIN, 'plain-token') });
    expect(await countOf(server, 'zoom-plain')).toBe(0);
  });

  it('on a source that does not verify, takes a body over 64 KiB as a delivery, never parsing it for a handshake', async () => {
    const large = JSON.stringify({
      event: 'endpoint.url_validation',
      payload: { plainToken: 'big' },
      pad: 'x'.repeat(64 * 1024),
    });
    const answer = await hook(server, 'zoom-plain', { body: large, headers: { 'content-type': JSON_TYPE } });
    expect(answer.status, answer.text).toBe(200);
    expect(json(answer)).toMatchObject({ source: 'zoom-plain' });
    expect(await countOf(server, 'zoom-plain')).toBe(1);
  });
});

describe('Microsoft Graph validationToken', () => {
  it('answers the decoded token as text/plain to a POST (as Graph sends it) and to a GET', async () => {
    const token = 'Validation: Testing client application <&> ü';
    const post = await hook(server, 'graph', {
      query: new URLSearchParams({ validationToken: token }).toString(),
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
    expect(post.status, post.text).toBe(200);
    expect(post.headers.get('content-type')).toMatch(/^text\/plain/);
    // The token is the sender's text, echoed on the web page's origin: never sniffed as HTML.
    expect(post.headers.get('x-content-type-options')).toBe('nosniff');
    expect(post.text).toBe(token);
    const get = await hook(server, 'graph', { method: 'GET', query: 'validationToken=abc123' });
    expect(get.status).toBe(200);
    expect(get.text).toBe('abc123');
    expect(await countOf(server, 'graph')).toBe(0);
  });

  it('stores the notifications that follow', async () => {
    await accepted(server, 'graph', {
      body: JSON.stringify({ value: [{ changeType: 'created' }] }),
      headers: { 'content-type': JSON_TYPE },
    });
    expect(await countOf(server, 'graph')).toBe(1);
  });
});

describe('X crc_token', () => {
  it('answers sha256= and the base64 HMAC-SHA256 of the token', async () => {
    const answer = await hook(server, 'x', { method: 'GET', query: 'crc_token=eGF2aWVyIHdhcyBoZXJl&nonce=1' });
    expect(answer.status, answer.text).toBe(200);
    expect(json(answer)).toEqual({
      response_token: `sha256=${createHmac('sha256', X_SECRET).update('eGF2aWVyIHdhcyBoZXJl').digest('base64')}`,
    });
    expect(await countOf(server, 'x')).toBe(0);
  });

  it('answers a GET without crc_token 405, and verifies the POSTs that follow', async () => {
    expect((await hook(server, 'x', { method: 'GET' })).status).toBe(405);
    const body = JSON.stringify({ for_user_id: '2244994945', tweet_create_events: [] });
    const signature = `sha256=${createHmac('sha256', X_SECRET).update(body).digest('base64')}`;
    const receipt = await accepted(server, 'x', {
      body,
      headers: { 'content-type': JSON_TYPE, 'x-twitter-webhooks-signature': signature },
    });
    expect((await readDelivery(server, receipt.id)).verification).toEqual({ status: 'verified', scheme: 'hmac' });
  });
});

describe('a source without a handshake', () => {
  it('answers no challenge: GETs are 405 and challenge bodies are stored like any delivery', async () => {
    const meta = await refused(
      server,
      'plain',
      { method: 'GET', query: `hub.mode=subscribe&hub.verify_token=${META_TOKEN}&hub.challenge=1` },
      'method_not_allowed',
    );
    expect(meta.status).toBe(405);
    expect((await hook(server, 'plain', { method: 'GET', query: 'crc_token=abc' })).status).toBe(405);
    const slack = await hook(server, 'plain', {
      body: JSON.stringify({ type: 'url_verification', challenge: 'c' }),
      headers: { 'content-type': JSON_TYPE },
    });
    expect(JSON.parse(slack.text)).toMatchObject({ source: 'plain' });
    expect(await countOf(server, 'plain')).toBe(1);
  });
});
