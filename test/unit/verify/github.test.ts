import { sign, verify } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { GitHubVerifier } from '../../../src/verify/github.js';
import {
  expectFailure,
  expectPass,
  hexMutations,
  request,
  verifyQuietly,
  withBody,
  withHeader,
} from '../../helpers/verify-request.js';

const SECRET = "It's a Secret to Everybody";
const PAYLOAD = JSON.stringify({ action: 'opened', number: 1, repository: { full_name: 'octo/hello' } });
const DELIVERY = '72d3162e-cc78-11e3-81ab-4c9367dc0958';

async function signed(options: { payload?: string; secret?: string } = {}): Promise<ReturnType<typeof request>> {
  const payload = options.payload ?? PAYLOAD;
  return request({
    body: payload,
    headers: {
      'x-hub-signature-256': await sign(options.secret ?? SECRET, payload),
      'x-github-delivery': DELIVERY,
      'x-github-event': 'pull_request',
    },
  });
}

describe('github', () => {
  const verifier = new GitHubVerifier({ secrets: [SECRET] });

  it('matches the published vector', () => {
    const input = request({
      body: 'Hello, World!',
      headers: { 'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' },
    });
    expectPass(verifier.verify(input));
  });

  it('accepts a delivery signed by @octokit/webhooks-methods, with X-GitHub-Delivery as delivery id', async () => {
    const input = await signed();
    expectPass(verifier.verify(input), { deliveryId: DELIVERY });
    expect(await verify(SECRET, PAYLOAD, String(input.headers['x-hub-signature-256']))).toBe(true);
  });

  it('gives no delivery id when the header is absent (Meta signs this way and sends none)', async () => {
    expectPass(verifier.verify(withHeader(await signed(), 'x-github-delivery', undefined)));
  });

  it('refuses a tampered body, as Octokit does', async () => {
    const input = await signed();
    const tampered = PAYLOAD.replace('opened', 'closed');
    expect(await verify(SECRET, tampered, String(input.headers['x-hub-signature-256']))).toBe(false);
    expectFailure(verifier.verify(withBody(input, tampered)), 'signature_mismatch');
  });

  it('refuses a wrong secret', async () => {
    expectFailure(verifier.verify(await signed({ secret: 'not it' })), 'signature_mismatch');
  });

  it('answers, never throws, for every mangled signature', async () => {
    const input = await signed();
    const hex = String(input.headers['x-hub-signature-256']).slice('sha256='.length);
    for (const bad of hexMutations(hex)) {
      const result = verifyQuietly(verifier, withHeader(input, 'x-hub-signature-256', `sha256=${bad}`));
      expect(result.ok, JSON.stringify(bad)).toBe(false);
    }
    expectFailure(verifier.verify(withHeader(input, 'x-hub-signature-256', `sha256=${hex}zz`)), 'malformed_signature');
    expectFailure(verifier.verify(withHeader(input, 'x-hub-signature-256', `sha256=${hex.slice(0, 40)}`)), 'signature_mismatch');
  });

  it('refuses a signature without its sha256= prefix, or with another', async () => {
    const input = await signed();
    const hex = String(input.headers['x-hub-signature-256']).slice('sha256='.length);
    expectFailure(verifier.verify(withHeader(input, 'x-hub-signature-256', hex)), 'malformed_signature');
    expectFailure(verifier.verify(withHeader(input, 'x-hub-signature-256', `sha1=${hex}`)), 'malformed_signature');
  });

  it('never falls back to the SHA-1 X-Hub-Signature header', async () => {
    const input = withHeader(await signed(), 'x-hub-signature-256', undefined);
    const sha1 = withHeader(input, 'x-hub-signature', 'sha1=0123456789abcdef0123456789abcdef01234567');
    expectFailure(verifier.verify(sha1), 'missing_signature');
  });

  it('accepts any of several secrets (rotation)', async () => {
    const rotating = new GitHubVerifier({ secrets: ['old', 'new'] });
    expectPass(rotating.verify(await signed({ secret: 'new' })), { secretIndex: 1, deliveryId: DELIVERY });
    expectPass(rotating.verify(await signed({ secret: 'old' })), { secretIndex: 0, deliveryId: DELIVERY });
    expectFailure(rotating.verify(await signed({ secret: 'older' })), 'signature_mismatch');
  });

  it('refuses a missing or empty header', async () => {
    const input = await signed();
    expectFailure(verifier.verify(withHeader(input, 'x-hub-signature-256', undefined)), 'missing_signature');
    expectFailure(verifier.verify(withHeader(input, 'x-hub-signature-256', '')), 'missing_signature');
  });
});
