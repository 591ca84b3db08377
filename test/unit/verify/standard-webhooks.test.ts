import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { StandardWebhooksVerifier } from '../../../src/verify/standard-webhooks.js';
import { VerifyConfigError } from '../../../src/verify/verifier.js';
import {
  NOW_MS,
  NOW_SECONDS,
  base64Mutations,
  expectFailure,
  expectPass,
  request,
  verifyQuietly,
  withBody,
  withHeader,
} from '../../helpers/verify-request.js';

// The published vector (standard-webhooks' own test suite).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

const SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
const OLD_SECRET = 'whsec_dGhlIG9sZCBzZWNyZXQgdGhhdCBpcyByb3RhdGVk';
const ID = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
const PAYLOAD = JSON.stringify({ type: 'invoice.paid', data: { id: 'inv_1' } });

/** A request signed by the standardwebhooks library. */
function signed(
  options: { secret?: string; timestamp?: number; payload?: string; prefix?: 'webhook' | 'svix' } = {},
): ReturnType<typeof request> {
  const payload = options.payload ?? PAYLOAD;
  const timestamp = options.timestamp ?? NOW_SECONDS;
  const signature = new Webhook(options.secret ?? SECRET).sign(ID, new Date(timestamp * 1000), payload);
  const prefix = options.prefix ?? 'webhook';
  return request({
    body: payload,
    headers: { [`${prefix}-id`]: ID, [`${prefix}-timestamp`]: String(timestamp), [`${prefix}-signature`]: signature },
  });
}

function signatureOf(input: ReturnType<typeof request>): string {
  return String(input.headers['webhook-signature']);
}

describe('standard-webhooks', () => {
  const verifier = new StandardWebhooksVerifier({ secrets: [SECRET] });

  it('matches the published vector', () => {
    const input = request({
      body: VECTOR.body,
      headers: { 'webhook-id': VECTOR.id, 'webhook-timestamp': String(VECTOR.timestamp), 'webhook-signature': VECTOR.signature },
      nowMs: VECTOR.timestamp * 1000,
    });
    expectPass(new StandardWebhooksVerifier({ secrets: [VECTOR.secret] }).verify(input), { deliveryId: VECTOR.id });
  });

  it('accepts a delivery signed by the standardwebhooks library, with webhook-id as delivery id', () => {
    expectPass(verifier.verify(signed()), { deliveryId: ID });
  });

  it('accepts the svix-* header names', () => {
    expectPass(verifier.verify(signed({ prefix: 'svix' })), { deliveryId: ID });
  });

  it("agrees with the library's own verify on a fresh delivery and a tampered one", () => {
    const nowSeconds = Math.floor(Date.now() / 1000);
    const input = { ...signed({ timestamp: nowSeconds }), nowMs: Date.now() };
    const headers = {
      'webhook-id': ID,
      'webhook-timestamp': String(nowSeconds),
      'webhook-signature': signatureOf(input),
    };
    expect(new Webhook(SECRET).verify(PAYLOAD, headers)).toEqual(JSON.parse(PAYLOAD));
    expectPass(verifier.verify(input), { deliveryId: ID });
    expect(() => new Webhook(SECRET).verify(`${PAYLOAD} `, headers)).toThrow();
    expectFailure(verifier.verify(withBody(input, `${PAYLOAD} `)), 'signature_mismatch');
  });

  it('refuses a tampered body, a wrong secret, and a changed id', () => {
    expectFailure(verifier.verify(withBody(signed(), PAYLOAD.replace('paid', 'void'))), 'signature_mismatch');
    expectFailure(verifier.verify(signed({ secret: OLD_SECRET })), 'signature_mismatch');
    expectFailure(verifier.verify(withHeader(signed(), 'webhook-id', 'msg_other')), 'signature_mismatch');
  });

  it('accepts the tolerance either way and refuses stale and future timestamps', () => {
    expectPass(verifier.verify(signed({ timestamp: NOW_SECONDS - 300 })), { deliveryId: ID });
    expectPass(verifier.verify(signed({ timestamp: NOW_SECONDS + 300 })), { deliveryId: ID });
    expectFailure(verifier.verify(signed({ timestamp: NOW_SECONDS - 301 })), 'timestamp_outside_tolerance');
    expectFailure(verifier.verify(signed({ timestamp: NOW_SECONDS + 301 })), 'timestamp_outside_tolerance');
    const wide = new StandardWebhooksVerifier({ secrets: [SECRET], toleranceSeconds: 3600 });
    expectPass(wide.verify(signed({ timestamp: NOW_SECONDS - 3600 })), { deliveryId: ID });
  });

  it('refuses a timestamp moved into the window (the timestamp is signed)', () => {
    const stale = signed({ timestamp: NOW_SECONDS - 1000 });
    expectFailure(verifier.verify(withHeader(stale, 'webhook-timestamp', String(NOW_SECONDS))), 'signature_mismatch');
  });

  it('answers, never throws, for every mangled signature', () => {
    const input = signed();
    const base64 = signatureOf(input).slice(3);
    for (const bad of base64Mutations(base64)) {
      const result = verifyQuietly(verifier, withHeader(input, 'webhook-signature', `v1,${bad}`));
      expect(result.ok, JSON.stringify(bad)).toBe(false);
    }
    expectFailure(verifier.verify(withHeader(input, 'webhook-signature', `v1,${base64}zz`)), 'malformed_signature');
    expectFailure(verifier.verify(withHeader(input, 'webhook-signature', `v1,${base64.slice(0, -4)}`)), 'signature_mismatch');
  });

  it('accepts a list with bad entries and one good one, skipping other versions', () => {
    const input = signed();
    const good = signatureOf(input);
    const other = new Webhook(OLD_SECRET).sign(ID, new Date(NOW_MS), PAYLOAD);
    for (const list of [
      `${other} ${good}`,
      `${good} ${other}`,
      `v1,junk!! ${good}`,
      `v1a,${good.slice(3)} ${good}`,
      `v2,${good.slice(3)} ${good}`,
      `${other}  ${good}`,
    ]) {
      expectPass(verifier.verify(withHeader(input, 'webhook-signature', list)), { deliveryId: ID });
    }
    expectFailure(verifier.verify(withHeader(input, 'webhook-signature', `v1a,${good.slice(3)}`)), 'malformed_signature');
    expectFailure(verifier.verify(withHeader(input, 'webhook-signature', `v2,${good.slice(3)} ${other}`)), 'signature_mismatch');
  });

  it('accepts two header lines joined with ", "', () => {
    const input = signed();
    const other = new Webhook(OLD_SECRET).sign(ID, new Date(NOW_MS), PAYLOAD);
    expectPass(verifier.verify(withHeader(input, 'webhook-signature', `${other}, ${signatureOf(input)}`)), { deliveryId: ID });
    expectPass(verifier.verify(withHeader(input, 'webhook-signature', `${signatureOf(input)}, ${other}`)), { deliveryId: ID });
    expectPass(verifier.verify(withHeader(input, 'webhook-signature', [other, signatureOf(input)])), { deliveryId: ID });
  });

  it('accepts any of several secrets (rotation)', () => {
    const rotating = new StandardWebhooksVerifier({ secrets: [OLD_SECRET, SECRET] });
    expectPass(rotating.verify(signed()), { secretIndex: 1, deliveryId: ID });
    expectPass(rotating.verify(signed({ secret: OLD_SECRET })), { secretIndex: 0, deliveryId: ID });
  });

  it('accepts a secret given without its whsec_ prefix, as the library does', () => {
    const bare = new StandardWebhooksVerifier({ secrets: [SECRET.slice('whsec_'.length)] });
    expectPass(bare.verify(signed()), { deliveryId: ID });
  });

  it('accepts a secret without its base64 padding or with unused trailing bits, as the library does', () => {
    // whsec_dGVzdA== is the canonical form of the key "test".
    for (const secret of ['whsec_dGVzdA', 'whsec_dGVzdA=', 'whsec_dGVzdB==']) {
      const input = signed({ secret });
      expectPass(new StandardWebhooksVerifier({ secrets: [secret] }).verify(input), { deliveryId: ID });
      expectPass(new StandardWebhooksVerifier({ secrets: ['whsec_dGVzdA=='] }).verify(input), { deliveryId: ID });
    }
    // What the library refuses is refused here too.
    for (const secret of ['whsec_abc', 'whsec_a', 'whsec_dGVzdA===']) {
      expect(() => new Webhook(secret), secret).toThrow();
      expect(() => new StandardWebhooksVerifier({ secrets: [secret] }), secret).toThrow(VerifyConfigError);
    }
  });

  it('refuses at construction a secret that is not base64', () => {
    expect(() => new StandardWebhooksVerifier({ secrets: ['whsec_not base64!'] })).toThrow(VerifyConfigError);
    expect(() => new StandardWebhooksVerifier({ secrets: [SECRET, 'whsec_'] })).toThrow(/secrets\[1\]/);
  });

  it('refuses missing headers', () => {
    expectFailure(verifier.verify(withHeader(signed(), 'webhook-signature', undefined)), 'missing_signature');
    expectFailure(verifier.verify(withHeader(signed(), 'webhook-id', undefined)), 'missing_id');
    expectFailure(verifier.verify(withHeader(signed(), 'webhook-timestamp', undefined)), 'missing_timestamp');
    expectFailure(verifier.verify(withHeader(signed(), 'webhook-timestamp', 'yesterday')), 'malformed_timestamp');
  });
});
