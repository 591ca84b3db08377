import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ZoomVerifier } from '../../../src/verify/zoom.js';
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

const SECRET = 'lRyqtAp6TfGS1vXdJVbEYQ';
const EVENT = JSON.stringify({
  event: 'meeting.started',
  event_ts: 1_700_000_000_000,
  payload: { account_id: 'abc', object: { id: '123' } },
});

/** Zoom has no signing helper: this is its documented message and HMAC. */
function signed(options: { body?: string; secret?: string; timestamp?: number } = {}): ReturnType<typeof request> {
  const body = options.body ?? EVENT;
  const timestamp = options.timestamp ?? NOW_SECONDS;
  const hex = createHmac('sha256', options.secret ?? SECRET)
    .update(`v0:${timestamp}:${body}`)
    .digest('hex');
  return request({ body, headers: { 'x-zm-signature': `v0=${hex}`, 'x-zm-request-timestamp': String(timestamp) } });
}

describe('zoom', () => {
  const verifier = new ZoomVerifier({ secrets: [SECRET] });

  it('accepts a signed event; Zoom sends no delivery id', () => {
    expectPass(verifier.verify(signed()));
  });

  it('matches a signature computed outside Node for a fixed message', () => {
    // printf 'v0:1700000000:{}' | openssl dgst -sha256 -hmac key
    const hex = 'fd9fa6c53274153a1b20c4777f83ea49e617d4b58da089ca0e8ae76300d03970';
    const input = request({
      body: '{}',
      headers: { 'x-zm-signature': `v0=${hex}`, 'x-zm-request-timestamp': String(NOW_SECONDS) },
    });
    expectPass(new ZoomVerifier({ secrets: ['key'] }).verify(input));
    expectFailure(new ZoomVerifier({ secrets: ['kez'] }).verify(input), 'signature_mismatch');
  });

  it('refuses a tampered body and a wrong secret', () => {
    expectFailure(verifier.verify(withBody(signed(), EVENT.replace('started', 'ended'))), 'signature_mismatch');
    expectFailure(verifier.verify(signed({ secret: 'other' })), 'signature_mismatch');
  });

  it('refuses stale and future timestamps beyond 5 minutes', () => {
    expectPass(verifier.verify(signed({ timestamp: NOW_SECONDS - 300 })));
    expectPass(verifier.verify(signed({ timestamp: NOW_SECONDS + 300 })));
    expectFailure(verifier.verify(signed({ timestamp: NOW_SECONDS - 301 })), 'timestamp_outside_tolerance');
    expectFailure(verifier.verify(signed({ timestamp: NOW_SECONDS + 301 })), 'timestamp_outside_tolerance');
  });

  it('honours a configured tolerance', () => {
    const wide = new ZoomVerifier({ secrets: [SECRET], toleranceSeconds: 900 });
    expectPass(wide.verify(signed({ timestamp: NOW_SECONDS - 900 })));
    expectFailure(wide.verify(signed({ timestamp: NOW_SECONDS - 901 })), 'timestamp_outside_tolerance');
  });

  it('refuses a timestamp in milliseconds (Zoom sends seconds)', () => {
    expectFailure(verifier.verify(signed({ timestamp: NOW_SECONDS * 1000 })), 'timestamp_outside_tolerance');
  });

  it('answers, never throws, for every mangled signature', () => {
    const input = signed();
    const hex = String(input.headers['x-zm-signature']).slice(3);
    for (const bad of hexMutations(hex)) {
      const result = verifyQuietly(verifier, withHeader(input, 'x-zm-signature', `v0=${bad}`));
      expect(result.ok, JSON.stringify(bad)).toBe(false);
    }
    expectFailure(verifier.verify(withHeader(input, 'x-zm-signature', `v0=${hex}zz`)), 'malformed_signature');
  });

  it('refuses missing headers', () => {
    expectFailure(verifier.verify(withHeader(signed(), 'x-zm-signature', undefined)), 'missing_signature');
    expectFailure(verifier.verify(withHeader(signed(), 'x-zm-request-timestamp', undefined)), 'missing_timestamp');
  });

  it('accepts any of several secrets (rotation)', () => {
    const rotating = new ZoomVerifier({ secrets: ['old-token', SECRET] });
    expectPass(rotating.verify(signed()), { secretIndex: 1 });
  });
});
