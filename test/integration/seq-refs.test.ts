import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import { testStoreKind, type RunningApp } from '../helpers/app.js';
import { api, startForwarding } from '../helpers/forwarding-app.js';

/**
 * Every route under /api/deliveries/{id} takes the seq the page shows (`#42`)
 * as well as the id: the forwards, a manual send and a multipart file, as the
 * delivery itself, its raw body and its delete do (read-api.test.ts).
 */

const CONFIG: ConfigFile = {
  sources: { mail: { accept: ['multipart'], forward: [{ to: 'worker' }] } },
  destinations: { worker: { pull: true } },
};

const BOUNDARY = 'seqrefs';
const BODY = [
  `--${BOUNDARY}`,
  'Content-Disposition: form-data; name="subject"',
  '',
  'hello',
  `--${BOUNDARY}`,
  'Content-Disposition: form-data; name="attachment"; filename="note.txt"',
  'Content-Type: text/plain',
  '',
  'the file bytes',
  `--${BOUNDARY}--`,
  '',
].join('\r\n');

describe('a delivery named by its seq', () => {
  let server: RunningApp<InboxDatabase>;
  let id: string;
  let seq: number;

  beforeAll(async () => {
    server = await startForwarding(testStoreKind(), CONFIG);
    const res = await fetch(`${server.url}/api/webhook/mail`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      body: BODY,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    id = ((await res.json()) as { id: string }).id;
    const { json } = await api<{ seq: number }>(server, `/api/deliveries/${id}`);
    seq = json.seq;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists its forwards', async () => {
    const bySeq = await api<{ items: Array<{ destination: string }> }>(server, `/api/deliveries/${seq}/forwards`);
    const byId = await api<{ items: Array<{ destination: string }> }>(server, `/api/deliveries/${id}/forwards`);
    expect(bySeq.status).toBe(200);
    expect(bySeq.json).toEqual(byId.json);
    expect(bySeq.json.items.map((f) => f.destination)).toEqual(['worker']);
  });

  it('sends it again to a destination', async () => {
    const sent = await api<{ destination: string }>(server, `/api/deliveries/${seq}/forward`, {
      method: 'POST',
      body: { destination: 'worker' },
    });
    expect(sent.status, JSON.stringify(sent.json)).toBe(201);
    const { json } = await api<{ items: unknown[] }>(server, `/api/deliveries/${id}/forwards`);
    expect(json.items).toHaveLength(2);
  });

  it('downloads its file', async () => {
    const res = await fetch(`${server.url}/api/deliveries/${seq}/files/0`, { headers: server.auth });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('the file bytes');
  });

  it('answers 404 for a seq that no delivery has, on each of these routes', async () => {
    const none = seq + 1000;
    expect((await api(server, `/api/deliveries/${none}/forwards`)).status).toBe(404);
    expect(
      (await api(server, `/api/deliveries/${none}/forward`, { method: 'POST', body: { destination: 'worker' } })).status,
    ).toBe(404);
    expect((await fetch(`${server.url}/api/deliveries/${none}/files/0`, { headers: server.auth })).status).toBe(404);
    expect((await api(server, `/api/deliveries/0${seq}/forwards`)).status).toBe(404);
  });
});
