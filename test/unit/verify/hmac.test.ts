import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GenericHmacVerifier } from '../../../src/verify/hmac.js';
import { VerifyConfigError } from '../../../src/verify/verifier.js';
import {
  base64Mutations,
  expectFailure,
  expectPass,
  hexMutations,
  request,
  verifyQuietly,
  withBody,
  withHeader,
} from '../../helpers/verify-request.js';

const SECRET = 'orders-secret';
const BODY = JSON.stringify({ order: 42, total: '9.99' });

function digest(algorithm: string, encoding: 'hex' | 'base64', secret = SECRET, body = BODY): string {
  return createHmac(algorithm, secret).update(body).digest(encoding);
}

describe('hmac (generic)', () => {
  const verifier = new GenericHmacVerifier({
    secrets: [SECRET],
    header: 'X-Signature',
    algorithm: 'sha256',
    encoding: 'hex',
    prefix: 'sha256=',
  });
  const signed = request({ body: BODY, headers: { 'x-signature': `sha256=${digest('sha256', 'hex')}` } });

  it('matches a digest computed outside Node', () => {
    // printf 'hello' | openssl dgst -sha256 -hmac secret
    const input = request({
      body: 'hello',
      headers: { 'x-signature': 'sha256=88aab3ede8d3adf94d26ab90d3bafd4a2083070c3bcce9c014ee04a443847c0b' },
    });
    expectPass(new GenericHmacVerifier({ secrets: ['secret'], header: 'X-Signature', prefix: 'sha256=' }).verify(input));
  });

  it('accepts the configured header (any case in the config), prefix, algorithm and encoding; no delivery id', () => {
    expectPass(verifier.verify(signed));
  });

  it.each([
    ['sha1', 'hex'],
    ['sha1', 'base64'],
    ['sha256', 'hex'],
    ['sha256', 'base64'],
    ['sha512', 'hex'],
    ['sha512', 'base64'],
  ] as const)("supports %s in %s, and refuses the other algorithms' digests", (algorithm, encoding) => {
    const one = new GenericHmacVerifier({ secrets: [SECRET], header: 'x-hook-signature', algorithm, encoding });
    expectPass(one.verify(request({ body: BODY, headers: { 'x-hook-signature': digest(algorithm, encoding) } })));
    for (const other of ['sha1', 'sha256', 'sha512'].filter((each) => each !== algorithm)) {
      const result = one.verify(request({ body: BODY, headers: { 'x-hook-signature': digest(other, encoding) } }));
      expect(result.ok, other).toBe(false);
    }
  });

  it('defaults to sha256, hex and no prefix', () => {
    const plain = new GenericHmacVerifier({ secrets: [SECRET], header: 'x-sig' });
    expectPass(plain.verify(request({ body: BODY, headers: { 'x-sig': digest('sha256', 'hex') } })));
  });

  it('refuses a tampered body and a wrong secret', () => {
    expectFailure(verifier.verify(withBody(signed, BODY.replace('9.99', '0.01'))), 'signature_mismatch');
    const wrong = request({ body: BODY, headers: { 'x-signature': `sha256=${digest('sha256', 'hex', 'other')}` } });
    expectFailure(verifier.verify(wrong), 'signature_mismatch');
  });

  it('refuses a missing or different prefix', () => {
    expectFailure(verifier.verify(withHeader(signed, 'x-signature', digest('sha256', 'hex'))), 'malformed_signature');
    expectFailure(verifier.verify(withHeader(signed, 'x-signature', `SHA256=${digest('sha256', 'hex')}`)), 'malformed_signature');
  });

  it('answers, never throws, for every mangled hex signature', () => {
    for (const bad of hexMutations(digest('sha256', 'hex'))) {
      const result = verifyQuietly(verifier, withHeader(signed, 'x-signature', `sha256=${bad}`));
      expect(result.ok, JSON.stringify(bad)).toBe(false);
    }
    expectFailure(
      verifier.verify(withHeader(signed, 'x-signature', `sha256=${digest('sha256', 'hex')}zz`)),
      'malformed_signature',
    );
  });

  it('answers, never throws, for every mangled base64 signature', () => {
    const base64 = new GenericHmacVerifier({ secrets: [SECRET], header: 'x-sig', encoding: 'base64' });
    const good = request({ body: BODY, headers: { 'x-sig': digest('sha256', 'base64') } });
    expectPass(base64.verify(good));
    for (const bad of base64Mutations(digest('sha256', 'base64'))) {
      const result = verifyQuietly(base64, withHeader(good, 'x-sig', bad));
      expect(result.ok, JSON.stringify(bad)).toBe(false);
    }
  });

  it('accepts any of several secrets (rotation)', () => {
    const rotating = new GenericHmacVerifier({ secrets: ['old', SECRET], header: 'X-Signature', prefix: 'sha256=' });
    expectPass(rotating.verify(signed), { secretIndex: 1 });
  });

  it('refuses a missing header', () => {
    expectFailure(verifier.verify(withHeader(signed, 'x-signature', undefined)), 'missing_signature');
  });

  it('refuses bad options at construction, naming the key', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ header: '' }, 'header'],
      [{ header: 'X Signature' }, 'header'],
      [{ header: 'x-sig', algorithm: 'md5' }, 'algorithm'],
      [{ header: 'x-sig', algorithm: 'SHA256' }, 'algorithm'],
      [{ header: 'x-sig', encoding: 'base64url' }, 'encoding'],
      [{ header: 'x-sig', prefix: 7 }, 'prefix'],
    ];
    for (const [options, key] of cases) {
      let error: unknown;
      try {
        new GenericHmacVerifier({ secrets: [SECRET], ...options } as never);
      } catch (caught) {
        error = caught;
      }
      expect(error, JSON.stringify(options)).toBeInstanceOf(VerifyConfigError);
      expect((error as VerifyConfigError).key).toBe(key);
    }
  });
});
