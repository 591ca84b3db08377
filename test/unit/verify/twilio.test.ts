import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { TwilioVerifier } from '../../../src/verify/twilio.js';
import { VerifyConfigError } from '../../../src/verify/verifier.js';
import {
  base64Mutations,
  expectFailure,
  expectPass,
  request,
  verifyQuietly,
  withBody,
  withHeader,
} from '../../helpers/verify-request.js';

const FORM = 'application/x-www-form-urlencoded';
const TOKEN = '12345';
const PUBLIC_URL = 'https://mycompany.com/myapp.php';

// The published vectors (twilio-node's own tests).
const VECTOR_PARAMS = {
  CallSid: 'CA1234567890ABCDE',
  Caller: '+14158675309',
  Digits: '1234',
  From: '+14158675309',
  To: '+18005551212',
};
const VECTOR_FORM_SIGNATURE = 'RSOYDt4T1cUTdK1PDd93/VVr8B8=';
const VECTOR_JSON_BODY = '{"property": "value", "boolean": true}';
const VECTOR_BODY_HASH = '0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620';
const VECTOR_JSON_SIGNATURE = 'a9nBmqA0ju/hNViExpshrM61xv4=';

type Params = Record<string, string | string[]>;

function formBody(params: Params): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const each of Array.isArray(value) ? value : [value]) form.append(name, each);
  }
  return form.toString();
}

/** A form request signed by twilio's getExpectedTwilioSignature over `signedUrl`. */
function signedForm(
  params: Params,
  options: { query?: string; signedUrl?: string; token?: string } = {},
): ReturnType<typeof request> {
  const query = options.query ?? '';
  const url = options.signedUrl ?? (query === '' ? PUBLIC_URL : `${PUBLIC_URL}?${query}`);
  const signature = twilio.getExpectedTwilioSignature(options.token ?? TOKEN, url, params);
  return request({
    body: formBody(params),
    contentType: FORM,
    query,
    headers: { 'x-twilio-signature': signature, 'i-twilio-idempotency-token': 'idem-0c5fa1f4' },
  });
}

/** A JSON request as Twilio sends it: the body's SHA-256 in the URL, the URL signed. */
function signedJson(body: string, options: { query?: string; token?: string } = {}): ReturnType<typeof request> {
  const query = `${options.query === undefined ? '' : `${options.query}&`}bodySHA256=${twilio.getExpectedBodyHash(body)}`;
  const signature = twilio.getExpectedTwilioSignature(options.token ?? TOKEN, `${PUBLIC_URL}?${query}`, {});
  return request({ body, contentType: 'application/json', query, headers: { 'x-twilio-signature': signature } });
}

describe('twilio', () => {
  const verifier = new TwilioVerifier({ secrets: [TOKEN], publicUrl: PUBLIC_URL });

  it("matches the published form vector: publicUrl, the request's own query, sorted params", () => {
    const input = request({
      body: formBody(VECTOR_PARAMS),
      contentType: FORM,
      query: 'foo=1&bar=2',
      headers: { 'x-twilio-signature': VECTOR_FORM_SIGNATURE },
    });
    expect(twilio.validateRequest(TOKEN, VECTOR_FORM_SIGNATURE, `${PUBLIC_URL}?foo=1&bar=2`, VECTOR_PARAMS)).toBe(true);
    expectPass(verifier.verify(input));
    expectFailure(verifier.verify({ ...input, query: 'bar=2&foo=1' }), 'signature_mismatch');
    expectFailure(verifier.verify({ ...input, query: '' }), 'signature_mismatch');
  });

  it('matches the published JSON vector: bodySHA256 in the URL, the URL signed', () => {
    const input = request({
      body: VECTOR_JSON_BODY,
      contentType: 'application/json',
      query: `foo=1&bar=2&bodySHA256=${VECTOR_BODY_HASH}`,
      headers: { 'x-twilio-signature': VECTOR_JSON_SIGNATURE },
    });
    expect(twilio.validateRequestWithBody(TOKEN, VECTOR_JSON_SIGNATURE, `${PUBLIC_URL}?${input.query}`, VECTOR_JSON_BODY)).toBe(
      true,
    );
    expectPass(verifier.verify(input));
  });

  it('accepts form requests signed by the twilio library, in any parameter order, with the idempotency token', () => {
    const params = {
      To: '+15005550006',
      Body: 'Hello & goodbye = 100% ✓',
      From: '+15005550001',
      MessageSid: 'SM123',
      a_b: ' spaced out ',
    };
    expectPass(verifier.verify(signedForm(params)), { deliveryId: 'idem-0c5fa1f4' });
    expectPass(verifier.verify(signedForm(params, { query: 'tenant=7&x=%20y' })), { deliveryId: 'idem-0c5fa1f4' });
    const reordered = {
      ...signedForm(params),
      raw: Buffer.from(
        formBody({
          a_b: ' spaced out ',
          To: '+15005550006',
          MessageSid: 'SM123',
          From: '+15005550001',
          Body: 'Hello & goodbye = 100% ✓',
        }),
      ),
    };
    expectPass(verifier.verify(reordered), { deliveryId: 'idem-0c5fa1f4' });
  });

  it('signs a repeated parameter as the library does', () => {
    const params = { MediaUrl: ['https://b.example/2', 'https://a.example/1'], NumMedia: '2' };
    expectPass(verifier.verify(signedForm(params)), { deliveryId: 'idem-0c5fa1f4' });
  });

  it('accepts a form type with a charset parameter and an empty form', () => {
    expectPass(verifier.verify({ ...signedForm({ A: '1' }), contentType: `${FORM}; charset=utf-8` }), {
      deliveryId: 'idem-0c5fa1f4',
    });
    expectPass(verifier.verify(signedForm({})), { deliveryId: 'idem-0c5fa1f4' });
  });

  it('accepts JSON requests signed by the twilio library', () => {
    const body = JSON.stringify({ event: 'status', sid: 'SM1', nested: { ok: true } });
    expectPass(verifier.verify(signedJson(body)));
    expectPass(verifier.verify(signedJson(body, { query: 'tenant=7' })));
  });

  it('tries the URL with and without the default port', () => {
    const params = { CallSid: 'CA1' };
    expectPass(verifier.verify(signedForm(params, { signedUrl: 'https://mycompany.com:443/myapp.php' })), {
      deliveryId: 'idem-0c5fa1f4',
    });
    const withPort = new TwilioVerifier({ secrets: [TOKEN], publicUrl: 'https://mycompany.com:443/myapp.php' });
    expectPass(withPort.verify(signedForm(params)), { deliveryId: 'idem-0c5fa1f4' });
    const plain = new TwilioVerifier({ secrets: [TOKEN], publicUrl: 'http://mycompany.com/myapp.php' });
    expectPass(plain.verify(signedForm(params, { signedUrl: 'http://mycompany.com:80/myapp.php' })), {
      deliveryId: 'idem-0c5fa1f4',
    });
    expectFailure(
      verifier.verify(signedForm(params, { signedUrl: 'https://mycompany.com:8443/myapp.php' })),
      'signature_mismatch',
    );
    expectFailure(verifier.verify(signedForm(params, { signedUrl: 'https://mycompany.com:80/myapp.php' })), 'signature_mismatch');
  });

  it("accepts and refuses the escaped forms of a query exactly as twilio's validateRequest does", () => {
    const params = { CallSid: 'CA1' };
    // [query as it arrives, URL that was signed]
    const cases: Array<[string, string]> = [
      ["name=it's", `${PUBLIC_URL}?name=it%27s`],
      ["name=it's", `${PUBLIC_URL}?name=it's`],
      ['at=a@b:c', `${PUBLIC_URL}?at=a%40b%3Ac`],
      ['sp=a%20b', `${PUBLIC_URL}?sp=a+b`],
      ["name=it's", `${PUBLIC_URL}?name=its`],
      ['q="x"', `${PUBLIC_URL}?q=%22x%22`],
    ];
    const verdicts = cases.map(([query, signedUrl]) => {
      const input = signedForm(params, { query, signedUrl });
      const signature = String(input.headers['x-twilio-signature']);
      const twilioSays = twilio.validateRequest(TOKEN, signature, `${PUBLIC_URL}?${query}`, params);
      const ours = verifyQuietly(verifier, input);
      expect(ours.ok, `${query} signed as ${signedUrl}`).toBe(twilioSays);
      return twilioSays;
    });
    // The cases cover both answers.
    expect(verdicts).toContain(true);
    expect(verdicts).toContain(false);
  });

  it('refuses tampered params, an added param, a tampered query and a wrong token', () => {
    const input = signedForm({ Body: 'pay 10', From: '+1500' }, { query: 'tenant=7' });
    expectFailure(verifier.verify(withBody(input, formBody({ Body: 'pay 99', From: '+1500' }))), 'signature_mismatch');
    expectFailure(
      verifier.verify(withBody(input, formBody({ Body: 'pay 10', From: '+1500', Extra: '1' }))),
      'signature_mismatch',
    );
    expectFailure(verifier.verify({ ...input, query: 'tenant=8' }), 'signature_mismatch');
    expectFailure(verifier.verify(signedForm({ Body: 'x' }, { token: 'other' })), 'signature_mismatch');
    expectFailure(
      new TwilioVerifier({ secrets: [TOKEN], publicUrl: 'https://mycompany.com/other.php' }).verify(input),
      'signature_mismatch',
    );
  });

  it('refuses a tampered JSON body (the URL still matches, the hash does not)', () => {
    const body = JSON.stringify({ amount: 10 });
    const input = signedJson(body);
    expect(
      twilio.validateRequestWithBody(
        TOKEN,
        String(input.headers['x-twilio-signature']),
        `${PUBLIC_URL}?${input.query}`,
        '{"amount":99}',
      ),
    ).toBe(false);
    expectFailure(verifier.verify(withBody(input, '{"amount":99}')), 'body_hash_mismatch');
  });

  it('refuses a JSON body whose URL carries no bodySHA256, and bad or doubled hashes', () => {
    const body = '{"amount":10}';
    const unhashed = request({
      body,
      contentType: 'application/json',
      headers: { 'x-twilio-signature': twilio.getExpectedTwilioSignature(TOKEN, PUBLIC_URL, {}) },
    });
    expectFailure(verifier.verify(unhashed), 'missing_body_hash');
    for (const query of [
      `bodySHA256=${twilio.getExpectedBodyHash(body)}zz`,
      `bodySHA256=${twilio.getExpectedBodyHash(body)}&bodySHA256=00`,
      'bodySHA256=',
    ]) {
      const signature = twilio.getExpectedTwilioSignature(TOKEN, `${PUBLIC_URL}?${query}`, {});
      const input = request({ body, contentType: 'application/json', query, headers: { 'x-twilio-signature': signature } });
      expectFailure(verifyQuietly(verifier, input), 'body_hash_mismatch');
    }
  });

  it('refuses a form body that cannot be decoded', () => {
    const input = request({ body: 'Body=%E0%A4%A', contentType: FORM, headers: { 'x-twilio-signature': VECTOR_FORM_SIGNATURE } });
    expectFailure(verifyQuietly(verifier, input), 'malformed_body');
  });

  it('answers, never throws, for every mangled signature', () => {
    const input = signedForm(VECTOR_PARAMS);
    const good = String(input.headers['x-twilio-signature']);
    for (const bad of base64Mutations(good)) {
      const result = verifyQuietly(verifier, withHeader(input, 'x-twilio-signature', bad));
      expect(result.ok, JSON.stringify(bad)).toBe(false);
    }
    expectFailure(verifier.verify(withHeader(input, 'x-twilio-signature', `${good}zz`)), 'malformed_signature');
  });

  it('accepts any of several auth tokens (primary and secondary)', () => {
    const rotating = new TwilioVerifier({ secrets: ['old-token', TOKEN], publicUrl: PUBLIC_URL });
    expectPass(rotating.verify(signedForm({ A: '1' })), { secretIndex: 1, deliveryId: 'idem-0c5fa1f4' });
    expectPass(rotating.verify(signedForm({ A: '1' }, { token: 'old-token' })), { secretIndex: 0, deliveryId: 'idem-0c5fa1f4' });
  });

  it('refuses a missing signature; gives no delivery id without the idempotency token', () => {
    expectFailure(verifier.verify(withHeader(signedForm({ A: '1' }), 'x-twilio-signature', undefined)), 'missing_signature');
    expectPass(verifier.verify(withHeader(signedForm({ A: '1' }), 'i-twilio-idempotency-token', undefined)));
  });

  it('needs an absolute http(s) publicUrl without query, fragment or credentials', () => {
    for (const publicUrl of [
      '',
      '/api/webhook/sms',
      'ftp://example.com/x',
      'https://example.com/x?a=1',
      'https://example.com/x?',
      'https://example.com/x#f',
      'https://u:p@example.com/x',
    ]) {
      expect(() => new TwilioVerifier({ secrets: [TOKEN], publicUrl }), publicUrl).toThrow(VerifyConfigError);
    }
  });
});
