import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/config/source-config.js';

/** The config file's broker destinations (CONTRACT 7): each mistake named by its key, with what was meant. */

const check = (destination: Record<string, unknown>): string[] =>
  validateConfig({ destinations: { bus: destination }, sources: {} });

describe('broker destinations in the config file', () => {
  it("accepts the contract's three examples", () => {
    expect(
      validateConfig({
        destinations: {
          bus: { nats: { url: 'nats://127.0.0.1:4222', subject: 'webhooks.{source}' }, allowPrivateNetwork: true },
          rabbit: {
            amqp: { url: 'amqp://guest:guest@127.0.0.1:5672', exchange: 'webhooks', routingKey: '{source}.{eventType}' },
            allowPrivateNetwork: true,
          },
          stream: {
            redis: { url: 'redis://127.0.0.1:6379', stream: 'webhooks:{source}', maxLen: 100000 },
            allowPrivateNetwork: true,
          },
        },
        sources: { shop: { forward: [{ to: 'bus' }, { to: 'rabbit' }, { to: 'stream' }] } },
      }),
    ).toEqual([]);
  });

  it('takes exactly one of url, pull, nats, amqp and redis', () => {
    expect(check({ url: 'https://a.example/h', nats: { url: 'nats://h', subject: 's' } })).toEqual([
      'destinations.bus: takes one of url, pull, nats, amqp or redis; it has url and nats',
    ]);
    expect(check({ pull: true, redis: { url: 'redis://h', stream: 's' } })).toEqual([
      'destinations.bus: takes one of url, pull, nats, amqp or redis; it has pull and redis',
    ]);
    expect(check({})[0]).toContain('or a broker to publish to (nats, amqp or redis)');
  });

  it('names a URL of the wrong broker and where it belongs, never quoting the URL', () => {
    expect(check({ nats: { url: 'amqp://user:pw-secret@h', subject: 's' } })).toEqual([
      'destinations.bus.nats.url: expected a nats:// or tls:// URL, got a amqp:// one; a amqp:// URL belongs under "amqp"',
    ]);
    const [problem] = check({ redis: { url: 'not a url pw-secret', stream: 's' } });
    expect(problem).toBe('destinations.bus.redis.url: not a valid redis:// or rediss:// URL (not shown: it may hold a password)');
  });

  it('names a placeholder that is not one, with the one meant', () => {
    expect(check({ nats: { url: 'nats://h', subject: 'webhooks.{sourse}' } })).toEqual([
      'destinations.bus.nats.subject: "{sourse}" is not a placeholder (did you mean "{source}"?); the placeholders are {source} and {eventType}',
    ]);
    expect(check({ amqp: { url: 'amqp://h', exchange: 'x', routingKey: '{event_type}' } })[0]).toContain(
      '(did you mean "{eventType}"?)',
    );
    expect(check({ redis: { url: 'redis://h', stream: 'a{source' } })[0]).toContain(
      'a "{" or "}" that does not enclose a placeholder',
    );
  });

  it('refuses a NATS subject that a publish cannot use', () => {
    const subject = (text: string): string | undefined => check({ nats: { url: 'nats://h', subject: text } })[0];
    expect(subject('webhooks.>')).toContain('holds no wildcard');
    expect(subject('webhooks.*.{source}')).toContain('holds no wildcard');
    expect(subject('web hooks')).toContain('no white space');
    expect(subject('webhooks..{source}')).toContain('no empty token');
    expect(subject('.{source}')).toContain('no empty token');
  });

  it('refuses an AMQP name longer than 255 bytes, and the settings only an HTTP destination takes', () => {
    expect(check({ amqp: { url: 'amqp://h', exchange: 'é'.repeat(128), routingKey: 'k' } })).toEqual([
      "destinations.bus.amqp.exchange: an exchange's name is at most 255 bytes",
    ]);
    expect(check({ amqp: { url: 'amqp://h', exchange: 'x', routingKey: `${'k'.repeat(254)}.{source}` } })[0]).toContain(
      'a routing key is at most 255 bytes',
    );
    expect(
      check({
        redis: { url: 'redis://h', stream: 's' },
        headers: { 'X-A': 'b' },
        sign: { secrets: [`whsec_${Buffer.alloc(24).toString('base64')}`] },
      }),
    ).toEqual([
      'destinations.bus.headers: only a destination with a url takes "headers" (a broker gets the metadata docs/forwarding.md lists)',
      'destinations.bus.sign: only a destination with a url takes "sign" (a broker gets the metadata docs/forwarding.md lists)',
    ]);
  });

  it('names unknown and missing keys of a broker, with the setting meant', () => {
    expect(check({ nats: { url: 'nats://h', subjct: 's' } })).toEqual(
      expect.arrayContaining([
        'destinations.bus.nats.subject: is required',
        expect.stringContaining('destinations.bus.nats.subjct: unknown key (did you mean "subject"?'),
      ]),
    );
    expect(check({ redis: { url: 'redis://h', stream: 's', maxLen: 0 } })[0]).toMatch(
      /^destinations\.bus\.redis\.maxLen: .*got 0$/,
    );
    expect(check({ redis: 'redis://h' })[0]).toMatch(/^destinations\.bus\.redis: .*not shown/);
  });
});
