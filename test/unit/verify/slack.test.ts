import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SlackVerifier } from '../../../src/verify/slack.js';
import {
  NOW_SECONDS,
  expectFailure,
  expectPass,
  hexMutations,
  request,
  verifyQuietly,
  withBody,
  withHeader,
} from '../../helpers/verify-request.js';

// The published vector (Slack's "Verifying requests from Slack" guide).
const VECTOR_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const VECTOR_TIMESTAMP = 1531420618;
const VECTOR_BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const VECTOR_SIGNATURE = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';

const SECRET = 'e6b19c573432dcc6b075501d51b51bb8';
const EVENT = JSON.stringify({
  token: 'x',
  team_id: 'T1',
  type: 'event_callback',
  event_id: 'Ev08MFMKH6',
  event: { type: 'app_mention' },
});

/** Slack has no signing helper: this is its documented basestring and HMAC. */
function signed(options: { body?: string; secret?: string; timestamp?: number } = {}): ReturnType<typeof request> {
  const body = options.body ?? EVENT;
  const timestamp = options.timestamp ?? NOW_SECONDS;
  const hex = createHmac('sha256', options.secret ?? SECRET)
    .update(`v0:${timestamp}:${body}`)
    .digest('hex');
  return request({ body, headers: { 'x-slack-signature': `v0=${hex}`, 'x-slack-request-timestamp': String(timestamp) } });
}

describe('slack', () => {
  const verifier = new SlackVerifier({ secrets: [SECRET] });

  it('matches the published vector (a slash command, form body, no event_id)', () => {
    const input = request({
      body: VECTOR_BODY,
      contentType: 'application/x-www-form-urlencoded',
      headers: { 'x-slack-signature': VECTOR_SIGNATURE, 'x-slack-request-timestamp': String(VECTOR_TIMESTAMP) },
      nowMs: VECTOR_TIMESTAMP * 1000 + 30_000,
    });
    expectPass(new SlackVerifier({ secrets: [VECTOR_SECRET] }).verify(input));
    expectFailure(new SlackVerifier({ secrets: [SECRET] }).verify(input), 'signature_mismatch');
  });

  it('takes event_id from an Events API body as delivery id', () => {
    expectPass(verifier.verify(signed()), { deliveryId: 'Ev08MFMKH6' });
  });

  it('refuses a tampered body and a wrong secret', () => {
    expectFailure(verifier.verify(withBody(signed(), EVENT.replace('app_mention', 'message'))), 'signature_mismatch');
    expectFailure(verifier.verify(signed({ secret: 'other' })), 'signature_mismatch');
  });

  it('accepts 5 minutes either way and refuses stale and future timestamps', () => {
    expectPass(verifier.verify(signed({ timestamp: NOW_SECONDS - 300 })), { deliveryId: 'Ev08MFMKH6' });
    expectPass(verifier.verify(signed({ timestamp: NOW_SECONDS + 300 })), { deliveryId: 'Ev08MFMKH6' });
    expectFailure(verifier.verify(signed({ timestamp: NOW_SECONDS - 301 })), 'timestamp_outside_tolerance');
    expectFailure(verifier.verify(signed({ timestamp: NOW_SECONDS + 301 })), 'timestamp_outside_tolerance');
    expectFailure(verifier.verify(signed({ timestamp: NOW_SECONDS - 86_400 })), 'timestamp_outside_tolerance');
  });

  it('refuses a timestamp changed to a fresh one (the timestamp is signed)', () => {
    const stale = signed({ timestamp: NOW_SECONDS - 3600 });
    expectFailure(verifier.verify(withHeader(stale, 'x-slack-request-timestamp', String(NOW_SECONDS))), 'signature_mismatch');
  });

  it('refuses missing and malformed timestamps', () => {
    const input = signed();
    expectFailure(verifier.verify(withHeader(input, 'x-slack-request-timestamp', undefined)), 'missing_timestamp');
    for (const bad of ['soon', '-1', `${NOW_SECONDS}.5`, `0${NOW_SECONDS}`, `${NOW_SECONDS}ms`, '1e9']) {
      expectFailure(verifier.verify(withHeader(input, 'x-slack-request-timestamp', bad)), 'malformed_timestamp');
    }
  });

  it('answers, never throws, for every mangled signature', () => {
    const input = signed();
    const hex = String(input.headers['x-slack-signature']).slice(3);
    for (const bad of hexMutations(hex)) {
      const result = verifyQuietly(verifier, withHeader(input, 'x-slack-signature', `v0=${bad}`));
      expect(result.ok, JSON.stringify(bad)).toBe(false);
    }
    expectFailure(verifier.verify(withHeader(input, 'x-slack-signature', `v0=${hex}zz`)), 'malformed_signature');
    expectFailure(verifier.verify(withHeader(input, 'x-slack-signature', `v1=${hex}`)), 'malformed_signature');
    expectFailure(verifier.verify(withHeader(input, 'x-slack-signature', hex)), 'malformed_signature');
    expectFailure(verifier.verify(withHeader(input, 'x-slack-signature', `v0=${hex.slice(2)}`)), 'signature_mismatch');
  });

  it('refuses a missing signature', () => {
    expectFailure(verifier.verify(withHeader(signed(), 'x-slack-signature', undefined)), 'missing_signature');
  });

  it('accepts any of several secrets (rotation)', () => {
    const rotating = new SlackVerifier({ secrets: ['old-secret', SECRET] });
    expectPass(rotating.verify(signed()), { secretIndex: 1, deliveryId: 'Ev08MFMKH6' });
  });

  it('verifies a url_verification handshake like any event (it is signed)', () => {
    const handshake = JSON.stringify({
      token: 'x',
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      type: 'url_verification',
    });
    expectPass(verifier.verify(signed({ body: handshake })));
    expectFailure(verifier.verify(withBody(signed({ body: handshake }), handshake.replace('3eZ', '4eZ'))), 'signature_mismatch');
  });
});
