import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ShopifyVerifier } from '../../../src/verify/shopify.js';
import {
  base64Mutations,
  expectFailure,
  expectPass,
  request,
  verifyQuietly,
  withBody,
  withHeader,
} from '../../helpers/verify-request.js';

const SECRET = 'shpss_0123456789abcdef0123456789abcdef';
const PAYLOAD = JSON.stringify({ id: 820982911946154500, email: 'jon@example.com', total_price: '199.00' });
const WEBHOOK_ID = 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043';

/** Shopify has no signing helper of its own: this is its documented HMAC. */
function signed(options: { payload?: string | Buffer; secret?: string } = {}): ReturnType<typeof request> {
  const payload = options.payload ?? PAYLOAD;
  return request({
    body: payload,
    headers: {
      'x-shopify-hmac-sha256': createHmac('sha256', options.secret ?? SECRET)
        .update(payload)
        .digest('base64'),
      'x-shopify-webhook-id': WEBHOOK_ID,
      'x-shopify-topic': 'orders/create',
    },
  });
}

describe('shopify', () => {
  const verifier = new ShopifyVerifier({ secrets: [SECRET] });

  it('accepts a signed delivery, with X-Shopify-Webhook-Id as delivery id', () => {
    expectPass(verifier.verify(signed()), { deliveryId: WEBHOOK_ID });
  });

  it('matches a digest computed independently of the verifier', () => {
    // HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog"), RFC-style known answer.
    const input = request({
      body: 'The quick brown fox jumps over the lazy dog',
      headers: {
        'x-shopify-hmac-sha256': Buffer.from('f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8', 'hex').toString(
          'base64',
        ),
      },
    });
    expectPass(new ShopifyVerifier({ secrets: ['key'] }).verify(input));
  });

  it('refuses a tampered body and a wrong secret', () => {
    expectFailure(verifier.verify(withBody(signed(), PAYLOAD.replace('199.00', '1.00'))), 'signature_mismatch');
    expectFailure(verifier.verify(signed({ secret: 'shpss_other' })), 'signature_mismatch');
  });

  it('answers, never throws, for every mangled signature', () => {
    const input = signed();
    const good = String(input.headers['x-shopify-hmac-sha256']);
    for (const bad of base64Mutations(good)) {
      const result = verifyQuietly(verifier, withHeader(input, 'x-shopify-hmac-sha256', bad));
      expect(result.ok, JSON.stringify(bad)).toBe(false);
    }
    expectFailure(verifier.verify(withHeader(input, 'x-shopify-hmac-sha256', `${good}zz`)), 'malformed_signature');
    expectFailure(verifier.verify(withHeader(input, 'x-shopify-hmac-sha256', good.slice(0, -4))), 'signature_mismatch');
  });

  it('refuses the hex form of the right digest (valid base64 of 48 other bytes)', () => {
    const input = signed();
    const hex = Buffer.from(String(input.headers['x-shopify-hmac-sha256']), 'base64').toString('hex');
    expectFailure(verifier.verify(withHeader(input, 'x-shopify-hmac-sha256', hex)), 'signature_mismatch');
  });

  it('accepts any of several secrets (rotation)', () => {
    const rotating = new ShopifyVerifier({ secrets: ['shpss_old', SECRET] });
    expectPass(rotating.verify(signed()), { secretIndex: 1, deliveryId: WEBHOOK_ID });
  });

  it('refuses a missing header, and gives no delivery id without X-Shopify-Webhook-Id', () => {
    expectFailure(verifier.verify(withHeader(signed(), 'x-shopify-hmac-sha256', undefined)), 'missing_signature');
    expectPass(verifier.verify(withHeader(signed(), 'x-shopify-webhook-id', undefined)));
  });
});
