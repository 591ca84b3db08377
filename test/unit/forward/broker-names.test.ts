import { describe, expect, it } from 'vitest';
import { parseNameTemplate, type NameTemplate } from '../../../src/forwarding/name-template.js';
import { renderName } from '../../../src/forwarding/publishers/broker-names.js';
import { withoutUrlSecrets, shownUrl } from '../../../src/forwarding/url-secrets.js';

function template(text: string): NameTemplate {
  const parsed = parseNameTemplate(text);
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed.template;
}

describe('broker names for a delivery (the rule the README states)', () => {
  it('keeps a dot inside a value as a token separator, so that consumers bind stripe.invoice.* (CONTRACT 7)', () => {
    const paid = { source: 'stripe', eventType: 'invoice.paid' };
    expect(renderName(template('{source}.{eventType}'), 'amqp', paid)).toBe('stripe.invoice.paid');
    expect(renderName(template('fwd.{eventType}'), 'nats', paid)).toBe('fwd.invoice.paid');
    expect(
      renderName(template('webhooks.{source}.{eventType}'), 'nats', { source: 'github', eventType: 'pull_request.opened' }),
    ).toBe('webhooks.github.pull_request.opened');
  });

  it('makes "*", ">", "#", white space, control characters and an empty token "_" for NATS and AMQP', () => {
    const values = { source: 'a b.c*d>e#f\tg\u0000h', eventType: 'invoice.paid' };
    expect(renderName(template('webhooks.{source}.{eventType}'), 'nats', values)).toBe('webhooks.a_b.c_d_e_f_g_h.invoice.paid');
    expect(renderName(template('{source}.{eventType}'), 'amqp', values)).toBe('a_b.c_d_e_f_g_h.invoice.paid');
    for (const broker of ['nats', 'amqp'] as const) {
      expect(renderName(template('{source}.{eventType}'), broker, { source: 's', eventType: 'a..b' })).toBe('s.a._.b');
      expect(renderName(template('{source}.{eventType}'), broker, { source: 's', eventType: '.x.' })).toBe('s._.x._');
      expect(renderName(template('{source}.{eventType}'), broker, { source: 's', eventType: '.' })).toBe('s._._');
      expect(renderName(template('x.{eventType}'), broker, { source: 's', eventType: '*.>' })).toBe('x._._');
    }
    expect(renderName(template('{source}'), 'nats', { source: '日本', eventType: null })).toBe('日本');
  });

  it('leaves the values as they are in a Redis key, which takes any bytes', () => {
    expect(renderName(template('webhooks:{source}:{eventType}'), 'redis', { source: 'a b.c', eventType: 'x*y' })).toBe(
      'webhooks:a b.c:x*y',
    );
  });

  it('writes "none" for no event type (or an empty one), and uses at most 128 characters of one', () => {
    expect(renderName(template('{eventType}'), 'nats', { source: 's', eventType: null })).toBe('none');
    expect(renderName(template('{eventType}'), 'redis', { source: 's', eventType: '' })).toBe('none');
    expect(renderName(template('{eventType}'), 'redis', { source: 's', eventType: '😀'.repeat(200) })).toBe('😀'.repeat(128));
  });
});

describe('broker URL secrets', () => {
  const url = new URL('amqp://guest:p%40ss-word@broker.example:5672/vhost?heartbeat=5');

  it('shows scheme, host and path only', () => {
    expect(shownUrl(url)).toBe('amqp://broker.example:5672/vhost?…');
    expect(shownUrl(new URL('nats://tok3n@127.0.0.1:4222'))).toBe('nats://127.0.0.1:4222');
  });

  it('takes the password (raw or decoded) and any userinfo out of a message', () => {
    expect(withoutUrlSecrets('failed amqp://guest:p%40ss-word@broker.example: bad p@ss-word', url)).toBe(
      'failed amqp://***@broker.example: bad ***',
    );
    // A NATS token is the user part, with no password.
    expect(withoutUrlSecrets('Authorization Violation for tok3n-abc', new URL('nats://tok3n-abc@h'))).toBe(
      'Authorization Violation for ***',
    );
  });
});
