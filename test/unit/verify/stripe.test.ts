import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { StripeVerifier } from '../../../src/verify/stripe.js';
import {
  NOW_MS,
  NOW_SECONDS,
  expectFailure,
  expectPass,
  headerOf,
  hexMutations,
  request,
  verifyQuietly,
  withBody,
  withHeader,
} from '../../helpers/verify-request.js';

const SECRET = 'whsec_test_secret_4eC39HqLyjWDarjtT1zdp7dc';
const OLD_SECRET = 'whsec_old_secret_0000000000000000000000';
const EVENT = JSON.stringify({ id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy', object: 'event', type: 'payment_intent.succeeded' });

/** A request signed by Stripe's own library. */
function signed(options: { payload?: string; secret?: string; timestamp?: number } = {}): ReturnType<typeof request> {
  const payload = options.payload ?? EVENT;
  const header = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? SECRET,
    timestamp: options.timestamp ?? NOW_SECONDS,
  });
  return request({ body: payload, headers: { 'stripe-signature': header } });
}

function v1Of(header: string): string {
  const match = /v1=([0-9a-f]+)/.exec(header);
  if (match?.[1] === undefined) throw new Error('no v1 in the header');
  return match[1];
}

describe('stripe', () => {
  const verifier = new StripeVerifier({ secrets: [SECRET] });

  it('accepts a delivery signed by stripe.webhooks.generateTestHeaderString, with the event id as delivery id', () => {
    expectPass(verifier.verify(signed()), { deliveryId: 'evt_1NG8Du2eZvKYlo2CUI79vXWy' });
  });

  it("agrees with Stripe's own constructEvent on the same header", () => {
    const input = signed();
    const header = headerOf(input, 'stripe-signature');
    expect(Stripe.webhooks.constructEvent(input.raw, header, SECRET, 300, undefined, NOW_MS).id).toBe(
      'evt_1NG8Du2eZvKYlo2CUI79vXWy',
    );
    expect(() => Stripe.webhooks.constructEvent(Buffer.from(`${EVENT} `), header, SECRET, 300, undefined, NOW_MS)).toThrow();
    expectFailure(verifier.verify(withBody(input, `${EVENT} `)), 'signature_mismatch');
  });

  it('refuses a tampered body', () => {
    expectFailure(verifier.verify(withBody(signed(), EVENT.replace('succeeded', 'failed'))), 'signature_mismatch');
  });

  it('refuses a wrong secret', () => {
    expectFailure(verifier.verify(signed({ secret: 'whsec_someone_else' })), 'signature_mismatch');
  });

  it('uses the whole whsec_ string as the key, not its base64 decoding', () => {
    const bare = new StripeVerifier({ secrets: [SECRET.slice('whsec_'.length)] });
    expectFailure(bare.verify(signed()), 'signature_mismatch');
  });

  it('accepts the edges of the 300 s window and refuses beyond, in both directions', () => {
    expectPass(verifier.verify(signed({ timestamp: NOW_SECONDS - 300 })), { deliveryId: 'evt_1NG8Du2eZvKYlo2CUI79vXWy' });
    expectPass(verifier.verify(signed({ timestamp: NOW_SECONDS + 300 })), { deliveryId: 'evt_1NG8Du2eZvKYlo2CUI79vXWy' });
    expectFailure(verifier.verify(signed({ timestamp: NOW_SECONDS - 301 })), 'timestamp_outside_tolerance');
    expectFailure(verifier.verify(signed({ timestamp: NOW_SECONDS + 301 })), 'timestamp_outside_tolerance');
  });

  it('honours a configured tolerance', () => {
    const strict = new StripeVerifier({ secrets: [SECRET], toleranceSeconds: 10 });
    expectPass(strict.verify(signed({ timestamp: NOW_SECONDS - 10 })), { deliveryId: 'evt_1NG8Du2eZvKYlo2CUI79vXWy' });
    expectFailure(strict.verify(signed({ timestamp: NOW_SECONDS - 11 })), 'timestamp_outside_tolerance');
  });

  it('refuses a changed timestamp even within the window (it is signed)', () => {
    const input = signed();
    const header = headerOf(input, 'stripe-signature').replace(`t=${NOW_SECONDS}`, `t=${NOW_SECONDS - 1}`);
    expectFailure(verifier.verify(withHeader(input, 'stripe-signature', header)), 'signature_mismatch');
  });

  it('answers, never throws, for every mangled v1 signature', () => {
    const input = signed();
    const v1 = v1Of(headerOf(input, 'stripe-signature'));
    for (const bad of hexMutations(v1)) {
      const result = verifyQuietly(verifier, withHeader(input, 'stripe-signature', `t=${NOW_SECONDS},v1=${bad}`));
      expect(result.ok, `v1=${JSON.stringify(bad)}`).toBe(false);
    }
  });

  it('names the failure for junk after the hex and for a wrong length', () => {
    const input = signed();
    const v1 = v1Of(headerOf(input, 'stripe-signature'));
    expectFailure(verifier.verify(withHeader(input, 'stripe-signature', `t=${NOW_SECONDS},v1=${v1}zz`)), 'malformed_signature');
    expectFailure(
      verifier.verify(withHeader(input, 'stripe-signature', `t=${NOW_SECONDS},v1=${v1.slice(0, 40)}`)),
      'signature_mismatch',
    );
  });

  it('accepts a list where one v1 is bad and another good, and ignores v0', () => {
    const input = signed();
    const v1 = v1Of(headerOf(input, 'stripe-signature'));
    const bad = '0'.repeat(64);
    for (const header of [
      `t=${NOW_SECONDS},v1=${bad},v1=${v1}`,
      `t=${NOW_SECONDS},v1=${v1},v1=${bad}`,
      `t=${NOW_SECONDS},v1=nothex,v1=${v1}`,
      `t=${NOW_SECONDS},v0=${bad},v1=${v1}`,
      `t=${NOW_SECONDS}, v1=${v1}`,
    ]) {
      expect(verifier.verify(withHeader(input, 'stripe-signature', header)).ok, header).toBe(true);
    }
    expectFailure(verifier.verify(withHeader(input, 'stripe-signature', `t=${NOW_SECONDS},v0=${v1}`)), 'missing_signature');
    expectFailure(
      verifier.verify(withHeader(input, 'stripe-signature', `t=${NOW_SECONDS},v1=${bad},v1=${bad}`)),
      'signature_mismatch',
    );
  });

  it('accepts any of several secrets (rotation) and says which matched', () => {
    const rotating = new StripeVerifier({ secrets: [OLD_SECRET, SECRET] });
    expectPass(rotating.verify(signed()), { secretIndex: 1, deliveryId: 'evt_1NG8Du2eZvKYlo2CUI79vXWy' });
    expectPass(rotating.verify(signed({ secret: OLD_SECRET })), { secretIndex: 0, deliveryId: 'evt_1NG8Du2eZvKYlo2CUI79vXWy' });
  });

  it('refuses missing and malformed headers', () => {
    const input = signed();
    const v1 = v1Of(headerOf(input, 'stripe-signature'));
    expectFailure(verifier.verify(withHeader(input, 'stripe-signature', undefined)), 'missing_signature');
    expectFailure(verifier.verify(withHeader(input, 'stripe-signature', '')), 'missing_signature');
    expectFailure(verifier.verify(withHeader(input, 'stripe-signature', `v1=${v1}`)), 'missing_timestamp');
    expectFailure(verifier.verify(withHeader(input, 'stripe-signature', `t=,v1=${v1}`)), 'malformed_timestamp');
    expectFailure(verifier.verify(withHeader(input, 'stripe-signature', `t=-5,v1=${v1}`)), 'malformed_timestamp');
    expectFailure(verifier.verify(withHeader(input, 'stripe-signature', `t=1e9,v1=${v1}`)), 'malformed_timestamp');
    expectFailure(verifier.verify(withHeader(input, 'stripe-signature', `t=${NOW_SECONDS}`)), 'missing_signature');
    expectFailure(
      verifier.verify(withHeader(input, 'stripe-signature', `t=${NOW_SECONDS},t=${NOW_SECONDS - 1},v1=${v1}`)),
      'malformed_signature',
    );
    expectFailure(verifier.verify(withHeader(input, 'stripe-signature', 'garbage')), 'missing_timestamp');
  });

  it('gives no delivery id when the body has no string id', () => {
    for (const payload of ['{"object":"event"}', '{"id":42}', '[{"id":"evt_1"}]', 'not json', '{"id":""}']) {
      const result = verifier.verify(signed({ payload }));
      expect(result, payload).toEqual({ ok: true, secretIndex: 0 });
    }
  });

  it('signs the raw bytes: a body that is not UTF-8 still verifies, and a re-encoded one does not', () => {
    const raw = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const signature = createHmac('sha256', SECRET).update(`${NOW_SECONDS}.`).update(raw).digest('hex');
    const header = Stripe.webhooks.generateTestHeaderString({ payload: '', secret: SECRET, timestamp: NOW_SECONDS, signature });
    expectPass(verifier.verify(request({ body: raw, headers: { 'stripe-signature': header } })));
    const reencoded = Buffer.from(raw.toString('utf8'), 'utf8');
    expectFailure(verifier.verify(request({ body: reencoded, headers: { 'stripe-signature': header } })), 'signature_mismatch');
  });
});
