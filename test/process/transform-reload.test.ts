import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { API_TOKEN, ServerChildren } from '../helpers/server-children.js';
import { eventually } from '../helpers/eventually.js';
import { deliver } from '../helpers/exchange.js';
import { DestinationServer } from '../helpers/destination-server.js';
import type { ServerProcess } from '../helpers/server-process.js';

/**
 * Transforms in a real process (CONTRACT 10): read from a file beside the
 * config at start, swapped by SIGHUP (a new version, new output), and a
 * reload whose transform does not compile is refused with the old one left
 * in force.
 */

const auth = { authorization: `Bearer ${API_TOKEN}` };
const children = new ServerChildren();
let destination: DestinationServer | undefined;
afterEach(async () => {
  await children.cleanup();
  await destination?.close();
  destination = undefined;
});

const CONFIG = {
  destinations: { chat: { url: 'https://hooks.example.com/chat' } },
  transforms: { shout: { file: 'transforms/shout.js' } },
  sources: { app: { forward: [{ to: 'chat', transform: 'shout' }] } },
};

function logged(server: ServerProcess, message: string): Array<Record<string, unknown>> {
  return server.logs.flatMap((line) => {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      return entry.msg === message ? [entry] : [];
    } catch {
      return [];
    }
  });
}

async function hangUp(server: ServerProcess, message: string): Promise<Record<string, unknown>> {
  const seen = logged(server, message).length;
  children.signal(server, 'SIGHUP');
  await eventually(() => logged(server, message).length > seen, 10_000, `no "${message}" log line after SIGHUP`);
  return logged(server, message)[seen] ?? {};
}

async function runShout(server: ServerProcess, deliveryId: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}/api/transforms/shout/run`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ deliveryId }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe('transforms and SIGHUP', () => {
  it('a reload swaps the code (a new version), and a reload with a broken transform is refused', async () => {
    const data = children.dataDir();
    mkdirSync(join(data, 'transforms'));
    const code = join(data, 'transforms', 'shout.js');
    writeFileSync(code, 'export default (e) => ({ body: { said: e.body.text } })');
    const configFile = join(data, 'reception.json');
    writeFileSync(configFile, JSON.stringify(CONFIG));
    const server = await children.start({ RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, RECEPTION_CONFIG: configFile });
    const { id } = await deliver(server, 'app', JSON.stringify({ text: 'hello' }));
    const first = await runShout(server, id);
    expect(first).toMatchObject({ output: { body: { said: 'hello' } } });

    writeFileSync(code, 'export default (e) => ({ body: { said: e.body.text.toUpperCase() } })');
    const reloaded = await hangUp(server, 'config reloaded');
    expect(reloaded.transforms).toEqual([expect.stringMatching(/^shout@[0-9a-f]{12}$/)]);
    const second = await runShout(server, id);
    expect(second).toMatchObject({ output: { body: { said: 'HELLO' } } });
    expect(second.version).not.toBe(first.version);

    writeFileSync(code, 'export default (e) => ({ body: e.body. })');
    const refused = await hangUp(server, 'config reload refused: the previous config stays in force');
    expect(String(refused.problem)).toContain('transforms.shout.file: SyntaxError');
    expect(await runShout(server, id)).toMatchObject({ output: { body: { said: 'HELLO' } }, version: second.version });
  });

  it('a forward failed by its transform, retried after SIGHUP fixed the code, is sent with the new version', async () => {
    destination = new DestinationServer();
    await destination.listen();
    const data = children.dataDir();
    mkdirSync(join(data, 'transforms'));
    const code = join(data, 'transforms', 'shout.js');
    writeFileSync(code, 'export default (e) => { throw new Error("not yet"); }');
    const configFile = join(data, 'reception.json');
    const config = {
      ...CONFIG,
      destinations: { chat: { url: destination.url, allowPrivateNetwork: true, retry: { initialMs: 20, maxMs: 200 } } },
    };
    writeFileSync(configFile, JSON.stringify(config));
    const server = await children.start({ RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, RECEPTION_CONFIG: configFile });
    const { id } = await deliver(server, 'app', JSON.stringify({ text: 'hello' }));
    type Attempt = { error: string | null; transform: { name: string; version: string } | null };
    const forwardOf = async (): Promise<{ id: string; status: string; attempts: Attempt[] } | undefined> => {
      const res = await fetch(`${server.url}/api/deliveries/${id}/forwards`, { headers: auth });
      return ((await res.json()) as { items: Array<{ id: string; status: string; attempts: Attempt[] }> }).items[0];
    };
    await eventually(async () => (await forwardOf())?.status === 'failed');
    expect((await forwardOf())?.attempts[0]?.error).toMatch(/^transform_failed: Error: not yet/);

    writeFileSync(code, 'export default (e) => ({ body: { said: e.body.text.toUpperCase() } })');
    await hangUp(server, 'config reloaded');
    const retried = await fetch(`${server.url}/api/forwards/retry`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'failed' }),
    });
    expect(await retried.json()).toEqual({ retried: 1 });
    await eventually(async () => (await forwardOf())?.status === 'succeeded');
    expect(destination.requests.map((r) => r.body.toString('utf8'))).toEqual(['{"said":"HELLO"}']);
    const [first, second] = (await forwardOf())?.attempts ?? [];
    expect(second?.transform?.name).toBe('shout');
    expect(second?.transform?.version).toMatch(/^[0-9a-f]{12}$/);
    expect(second?.transform?.version).not.toBe(first?.transform?.version);
  });
});
