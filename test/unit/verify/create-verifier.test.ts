import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { VERIFY_SCHEMES, createVerifier, isVerifyScheme, type VerifyConfig } from '../../../src/verify/create-verifier.js';
import { VerifyConfigError } from '../../../src/verify/verifier.js';
import { NOW_SECONDS, expectFailure, expectPass, request } from '../../helpers/verify-request.js';

/**
 * A block that has not been through the config schema (a hand-written caller):
 * createVerifier still refuses what the schema would have refused.
 */
type UncheckedConfig = Omit<VerifyConfig, 'scheme' | 'algorithm'> & { scheme: string; algorithm?: string };

function configError(config: UncheckedConfig): VerifyConfigError {
  try {
    createVerifier(config as VerifyConfig);
  } catch (error) {
    if (error instanceof VerifyConfigError) return error;
    throw error;
  }
  throw new Error(`createVerifier accepted ${JSON.stringify(config)}`);
}

describe('createVerifier', () => {
  it('lists every scheme of CONTRACT 4', () => {
    expect([...VERIFY_SCHEMES].sort()).toEqual([
      'github',
      'hmac',
      'shopify',
      'slack',
      'standard-webhooks',
      'stripe',
      'twilio',
      'zoom',
    ]);
    expect(isVerifyScheme('stripe')).toBe(true);
    expect(isVerifyScheme('toString')).toBe(false);
    expect(isVerifyScheme('none')).toBe(false);
  });

  it("builds each scheme from the contract's example config", () => {
    const configs: VerifyConfig[] = [
      { scheme: 'stripe', secrets: ['whsec_abc'], toleranceSeconds: 300 },
      { scheme: 'github', secrets: ['old', 'new'] },
      { scheme: 'standard-webhooks', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] },
      { scheme: 'shopify', secrets: ['s'] },
      { scheme: 'slack', secrets: ['s'] },
      { scheme: 'twilio', secrets: ['s'], publicUrl: 'https://example.com/api/webhook/sms' },
      { scheme: 'zoom', secrets: ['s'] },
      { scheme: 'hmac', secrets: ['s'], header: 'X-Signature', algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' },
    ];
    expect(configs.map((config) => createVerifier(config).scheme)).toEqual(configs.map((config) => config.scheme));
  });

  it('builds a verifier that really checks: a Stripe config with its tolerance', () => {
    const verifier = createVerifier({ scheme: 'stripe', secrets: ['whsec_abc'], toleranceSeconds: 60 });
    const body = '{"id":"evt_1"}';
    const sign = (timestamp: number): ReturnType<typeof request> =>
      request({
        body,
        headers: {
          'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret: 'whsec_abc', timestamp }),
        },
      });
    expectPass(verifier.verify(sign(NOW_SECONDS - 60)), { deliveryId: 'evt_1' });
    expectFailure(verifier.verify(sign(NOW_SECONDS - 61)), 'timestamp_outside_tolerance');
  });

  it('throws a clear error for an unknown scheme, never a silent "no verification"', () => {
    for (const scheme of ['none', '', 'Stripe', 'constructor', '__proto__']) {
      const error = configError({ scheme, secrets: ['s'] });
      expect(error.key).toBe('scheme');
      expect(error.message).toContain('unknown scheme');
      expect(error.message).toContain('standard-webhooks');
    }
  });

  it('throws for missing or empty secrets, naming the key', () => {
    expect(configError({ scheme: 'github', secrets: [] }).key).toBe('secrets');
    expect(configError({ scheme: 'github', secrets: undefined as unknown as string[] }).key).toBe('secrets');
    expect(configError({ scheme: 'github', secrets: ['ok', ''] }).key).toBe('secrets[1]');
  });

  it('throws for a bad tolerance', () => {
    for (const toleranceSeconds of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(configError({ scheme: 'slack', secrets: ['s'], toleranceSeconds }).key).toBe('toleranceSeconds');
    }
  });

  it('throws for an option the scheme does not use', () => {
    expect(configError({ scheme: 'github', secrets: ['s'], toleranceSeconds: 300 }).key).toBe('toleranceSeconds');
    expect(configError({ scheme: 'stripe', secrets: ['s'], publicUrl: 'https://x' }).key).toBe('publicUrl');
    expect(configError({ scheme: 'slack', secrets: ['s'], header: 'x-sig' }).key).toBe('header');
    expect(configError({ scheme: 'twilio', secrets: ['s'], publicUrl: 'https://x', prefix: 'p' }).key).toBe('prefix');
  });

  it('throws when a scheme lacks what it needs', () => {
    expect(configError({ scheme: 'twilio', secrets: ['s'] }).key).toBe('publicUrl');
    expect(configError({ scheme: 'hmac', secrets: ['s'] }).key).toBe('header');
    expect(configError({ scheme: 'hmac', secrets: ['s'], header: 'x', algorithm: 'md5' }).key).toBe('algorithm');
    expect(configError({ scheme: 'standard-webhooks', secrets: ['whsec_!!'] }).key).toBe('secrets[0]');
  });

  it('never puts a secret in an error message', () => {
    const secret = 'whsec_%%%never-shown%%%';
    expect(configError({ scheme: 'standard-webhooks', secrets: [secret] }).message).not.toContain('never-shown');
  });
});
