import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { killAllClis, runCli } from '../helpers/cli.js';
import { hmacHex, sendWebhook } from '../helpers/cli-send.js';
import { headerPairs, headerValue, Target } from '../helpers/listen-target.js';

let server: RunningApp;
let target: Target;

beforeEach(async () => {
  server = await startApp();
  target = new Target();
  await target.start();
});

afterEach(async () => {
  killAllClis();
  await target.stop();
  await server.close();
});

function replay(args: string[]): ReturnType<typeof runCli> {
  return runCli(['replay', ...args], { RECEPTION_URL: server.url, RECEPTION_TOKEN: server.token });
}

describe('reception replay', { timeout: 60_000 }, () => {
  it('sends a stored delivery again: same method, headers and bytes; prints the status', async () => {
    const bytes = Buffer.from('{"type":"invoice.paid",  "amount": 1.10, "nested": {"b": 2, "a": 1}}');
    const sent = await sendWebhook(server.url, '/api/webhook/stripe?attempt=3', bytes, [
      ['Content-Type', 'application/json'],
      ['Stripe-Signature', `t=1,v1=${hmacHex(bytes)}`],
      ['Cookie', 'session=abc'],
      ['X-Request-Id', 'req-1'],
    ]);

    for (let round = 1; round <= 2; round += 1) {
      const { code, stdout, stderr } = await replay([sent.id, '--to', target.url('/webhooks/stripe')]);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout).toContain(`POST ${target.url('/webhooks/stripe?attempt=3')}`);
      expect(stdout).toMatch(/-> 200 OK {2}\d+ ms\n$/);
      expect(target.received).toHaveLength(round);
    }
    for (const got of target.received) {
      expect(got.method).toBe('POST');
      expect(got.url).toBe('/webhooks/stripe?attempt=3');
      expect(got.body.equals(bytes)).toBe(true);
      expect(headerValue(got.rawHeaders, 'stripe-signature')).toBe(`t=1,v1=${hmacHex(got.body)}`);
      expect(headerPairs(got.rawHeaders).filter(([name]) => name.toLowerCase() !== 'connection')).toEqual([
        ['Host', new URL(target.url()).host],
        ['Content-Type', 'application/json'],
        ['Stripe-Signature', `t=1,v1=${hmacHex(bytes)}`],
        ['X-Request-Id', 'req-1'],
        ['Content-Length', String(bytes.length)],
      ]);
    }
  });

  it('takes the seq the page shows instead of the id', async () => {
    const bytes = Buffer.from('{"by":"seq"}');
    const sent = await sendWebhook(server.url, '/api/webhook/short', bytes, [['Content-Type', 'application/json']]);
    const seq = (
      (await (await fetch(`${server.url}/api/deliveries/${sent.id}`, { headers: server.auth })).json()) as { seq: number }
    ).seq;
    const { code, stdout, stderr } = await replay([String(seq), '--to', target.url('/hooks')]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`delivery ${sent.id}`);
    // As the page writes it, quoted (unquoted, a shell takes `#42` as a comment).
    const hashed = await replay([`#${seq}`, '--to', target.url('/hooks')]);
    expect(hashed.code).toBe(0);
    expect(target.received.map((got) => got.body.toString())).toEqual(['{"by":"seq"}', '{"by":"seq"}']);
  });

  it('takes --to as a port alone with a path: this machine, never an address made of the port (issue 28)', async () => {
    const sent = await sendWebhook(server.url, '/api/webhook/orders?n=1', '{"n":1}', [['Content-Type', 'application/json']]);
    const port = new URL(target.url()).port;
    for (const given of [`${port}/webhooks`, `:${port}/webhooks`]) {
      const { code, stdout, stderr } = await replay([sent.id, '--to', given, '--timeout', '5s']);
      expect(stderr, given).toBe('');
      expect(code, given).toBe(0);
      expect(stdout).toContain(`POST http://127.0.0.1:${port}/webhooks?n=1`);
    }
    expect(target.received.map((got) => got.url)).toEqual(['/webhooks?n=1', '/webhooks?n=1']);
    const wrong = await replay([sent.id, '--to', '0/webhooks']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--to: 0 is not a port (1 to 65535).');
  });

  it('exits 1 when the target answers an error, the delivery does not exist, or the target is down', async () => {
    const sent = await sendWebhook(server.url, '/api/webhook/a', '{"n":1}', [['Content-Type', 'application/json']]);
    target.status = () => 500;
    const failed = await replay([sent.id, '--to', target.url()]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('-> 500 Internal Server Error');

    const missing = await replay(['no-such-delivery', '--to', target.url()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('404 not_found');

    // The server's detail quotes the id given: an escape sequence in it is printed as an escape, not sent to the terminal.
    const hostile = await replay(['x\x1b]0;title\x07\x1b[2J\u202e\u200b', '--to', target.url()]);
    expect(hostile.code).toBe(1);
    expect(hostile.stderr).toContain('404 not_found');
    expect([...hostile.stderr].filter((char) => ['\x1b', '\x07', '\u202e', '\u200b'].includes(char))).toEqual([]);
    expect(hostile.stderr).toContain('x\\e]0;title\\x07\\e[2J\\u202e\\u200b');

    const down = target.url();
    await target.stop();
    const refused = await replay([sent.id, '--to', down]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('ECONNREFUSED');
  });
});
