import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { transformDefinitions, transformUsers } from '../../src/config/transform-config.js';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { DestinationServer, type ReceivedRequest } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import { api, forwardsOf, send, startForwarding, storeAvailable, STORES, type ForwardView } from '../helpers/forwarding-app.js';

/**
 * A route's transform on the forwarding path (CONTRACT 10), against a real
 * HTTP destination on loopback, on both stores: what is sent is the
 * transform's output (signed as sent), null cancels, a throw or a loop fails
 * the forward at once, and a reload's new code applies to a retry.
 */

const SECRET = `whsec_${Buffer.from('a secret of thirty-two bytes!!!!').toString('base64')}`;

const TRANSFORMS = {
  shape: {
    code: 'export default (e) => ({ body: { kind: e.eventType, id: e.body.id, n: [1, 2] }, headers: { "X-Shaped": "yes", "x-api-key": "from-transform" } })',
  },
  text: { code: 'export default (e) => ({ body: "hello " + e.body.id })' },
  headersOnly: { code: 'export default () => ({ headers: { "x-only": "1" } })' },
  drop: { code: 'export default () => null' },
  thrower: { code: 'export default (e) => { throw new Error("no amount on " + e.body.id); }' },
  looper: { code: 'export default () => { for (;;) {} }', timeoutMs: 300 },
  fixable: { code: 'export default () => { throw new Error("a bug"); }' },
};

function config(url: string, transforms: ConfigFile['transforms'] = TRANSFORMS): ConfigFile {
  const routes = Object.keys(TRANSFORMS).map((name) => [
    name,
    { eventType: { body: 'type' }, forward: [{ to: 'app', transform: name }] },
  ]);
  return {
    destinations: {
      app: {
        url,
        allowPrivateNetwork: true,
        retry: { initialMs: 20, maxMs: 200 },
        headers: { 'X-Api-Key': 'k-123' },
        sign: { secrets: [SECRET] },
      },
    },
    transforms,
    sources: { ...Object.fromEntries(routes), plain: { forward: [{ to: 'app' }] } },
  };
}

describe.each(STORES)('transforms on the forwarding path (%s)', (kind) => {
  let destination: DestinationServer;
  let server: RunningApp<InboxDatabase> | undefined;

  beforeEach(async () => {
    destination = new DestinationServer();
    await destination.listen();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await destination.close();
  });

  const start = async (): Promise<RunningApp<InboxDatabase> | undefined> => {
    if (!(await storeAvailable(kind, 'forwarding transform tests'))) return undefined;
    const file = config(destination.url);
    server = await startForwarding(kind, file, {
      transforms: { definitions: transformDefinitions(file), users: transformUsers(file) },
    });
    return server;
  };

  const settled = async (running: RunningApp<InboxDatabase>, id: string, status: string): Promise<ForwardView> => {
    let found: ForwardView | undefined;
    await eventually(async () => {
      found = (await forwardsOf(running, id))[0];
      return found?.status === status;
    });
    if (found === undefined) throw new Error('no forward');
    return found;
  };

  const only = (): ReceivedRequest => {
    expect(destination.requests).toHaveLength(1);
    const received = destination.requests[0];
    if (received === undefined) throw new Error('nothing received');
    return received;
  };

  it('sends the returned JSON with its headers, the same webhook-id, signed over what is sent', async () => {
    const running = await start();
    if (running === undefined) return;
    const id = await send(running, 'shape', '{"type":"invoice.paid","id":"in_1","amount":5}', {
      'content-type': 'application/vnd.shop+json',
      'x-kept': 'original',
    });
    const forward = await settled(running, id, 'succeeded');
    const received = only();
    expect(JSON.parse(received.body.toString('utf8'))).toEqual({ kind: 'invoice.paid', id: 'in_1', n: [1, 2] });
    expect(received.body.toString('utf8')).toBe('{"kind":"invoice.paid","id":"in_1","n":[1,2]}');
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.headers['x-shaped']).toBe('yes');
    // The transform's header replaces the destination's own of the same name; the original headers stay.
    expect(received.headers['x-api-key']).toBe('from-transform');
    expect(received.headers['x-kept']).toBe('original');
    expect(received.headers['webhook-id']).toBe(id);
    const verified = new Webhook(SECRET).verify(received.body.toString('utf8'), {
      'webhook-id': String(received.headers['webhook-id']),
      'webhook-timestamp': String(received.headers['webhook-timestamp']),
      'webhook-signature': String(received.headers['webhook-signature']),
    });
    expect(verified).toEqual({ kind: 'invoice.paid', id: 'in_1', n: [1, 2] });
    expect(forward.attempts).toHaveLength(1);
    expect(forward.attempts[0]?.transform).toEqual({ name: 'shape', version: expect.stringMatching(/^[0-9a-f]{12}$/) });
  });

  it('a string body goes as UTF-8 with the original Content-Type; no body keeps the raw bytes', async () => {
    const running = await start();
    if (running === undefined) return;
    await send(running, 'text', '{"type":"t","id":"é1"}', { 'content-type': 'application/vnd.shop+json; charset=utf-8' });
    await eventually(() => destination.requests.length === 1);
    const received = only();
    expect(received.body.equals(Buffer.from('hello é1', 'utf8'))).toBe(true);
    expect(received.headers['content-type']).toBe('application/vnd.shop+json; charset=utf-8');
    destination.requests.length = 0;
    const raw = '{"type":"t", "id" : 2}';
    await send(running, 'headersOnly', raw);
    await eventually(() => destination.requests.length === 1);
    expect(only().body.toString('utf8')).toBe(raw);
    expect(only().headers['x-only']).toBe('1');
    expect(only().headers['content-type']).toBe('application/json');
  });

  it("a delivery sent again runs its route's transform", async () => {
    const running = await start();
    if (running === undefined) return;
    const id = await send(running, 'shape', '{"type":"invoice.paid","id":"in_7"}');
    await settled(running, id, 'succeeded');
    const again = await api<{ id: string }>(running, `/api/deliveries/${id}/forward`, {
      method: 'POST',
      body: { destination: 'app' },
    });
    expect(again.status).toBe(201);
    await eventually(() => destination.requests.length === 2);
    expect(destination.requests.map((r) => r.body.toString('utf8'))).toEqual([
      '{"kind":"invoice.paid","id":"in_7","n":[1,2]}',
      '{"kind":"invoice.paid","id":"in_7","n":[1,2]}',
    ]);
  });

  it('null cancels the forward with the transform named, and sends nothing', async () => {
    const running = await start();
    if (running === undefined) return;
    const id = await send(running, 'drop', '{"type":"invoice.draft","id":"in_2"}');
    const forward = await settled(running, id, 'cancelled');
    expect(forward.attempts.map((a) => a.error)).toEqual(['dropped by transform drop']);
    const { json } = await api<{ items: Array<{ id: string; lastError: string | null }> }>(
      running,
      '/api/forwards?status=cancelled',
    );
    expect(json.items.map((f) => f.lastError)).toEqual(['dropped by transform drop']);
    // Something sent after it arrives, and the dropped one never did.
    await send(running, 'plain', '{"after":true}');
    await eventually(() => destination.requests.length === 1);
    expect(only().body.toString('utf8')).toBe('{"after":true}');
  });

  it('a throw fails the forward at once with transform_failed, without sending', async () => {
    const running = await start();
    if (running === undefined) return;
    const id = await send(running, 'thrower', '{"type":"x","id":"in_3"}');
    const forward = await settled(running, id, 'failed');
    expect(forward.attempts).toHaveLength(1);
    expect(forward.attempts[0]?.error).toMatch(/^transform_failed: .*no amount on in_3/);
    expect(destination.requests).toHaveLength(0);
  });

  it('an infinite loop fails the forward at its deadline while the webhook route keeps answering', async () => {
    const running = await start();
    if (running === undefined) return;
    const id = await send(running, 'looper', '{"type":"x","id":"in_4"}');
    // Sent while the loop runs (its deadline is 300 ms): the webhook route answers it.
    const res = await fetch(`${running.url}/api/webhook/plain`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"during":1}',
    });
    expect(res.status).toBe(200);
    const forward = await settled(running, id, 'failed');
    expect(forward.attempts).toHaveLength(1);
    expect(forward.attempts[0]?.error).toMatch(/^transform_failed: .*time limit/);
    await eventually(() => destination.requests.length === 1);
    expect(only().body.toString('utf8')).toBe('{"during":1}');
  });

  it('after a reload with fixed code, a retry runs the new version', async () => {
    const running = await start();
    if (running === undefined) return;
    const id = await send(running, 'fixable', '{"type":"x","id":"in_5"}');
    const failed = await settled(running, id, 'failed');
    expect(failed.attempts[0]?.error).toBe('transform_failed: Error: a bug (line 1)');
    // What SIGHUP applies (src/server.ts): the config read again, its transforms swapped.
    const fixed = config(destination.url, {
      ...TRANSFORMS,
      fixable: { code: 'export default (e) => ({ body: { fixed: e.body.id } })' },
    });
    running.app.transforms.apply(transformDefinitions(fixed), transformUsers(fixed));
    const { status, json } = await api<{ retried: number }>(running, '/api/forwards/retry', {
      method: 'POST',
      body: { ids: [failed.id] },
    });
    expect([status, json.retried]).toEqual([200, 1]);
    const after = await settled(running, id, 'succeeded');
    expect(only().body.toString('utf8')).toBe('{"fixed":"in_5"}');
    const [first, second] = after.attempts;
    expect(first?.transform?.name).toBe('fixable');
    expect(second?.transform?.name).toBe('fixable');
    expect(second?.transform?.version).not.toBe(first?.transform?.version);
  });

  it('a transform the reloaded config no longer has fails the forward: unknown transform', async () => {
    const running = await start();
    if (running === undefined) return;
    const without = config(
      destination.url,
      Object.fromEntries(Object.entries(TRANSFORMS).filter(([name]) => name !== 'fixable')),
    );
    running.app.transforms.apply(transformDefinitions(without), transformUsers(without));
    const id = await send(running, 'fixable', '{"type":"x","id":"in_6"}');
    const forward = await settled(running, id, 'failed');
    expect(forward.attempts.map((a) => [a.error, a.transform])).toEqual([['transform_failed: unknown transform fixable', null]]);
  });
});
