import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';

describe('receive and read back', () => {
  let server: RunningApp;
  beforeAll(async () => { server = await startApp(); });
  afterAll(async () => { await server.close(); });

  it('stores a JSON object and reads it back by id', async () => {
    const sent = await fetch(`${server.url}/api/webhook/github`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"event":"push"}',
    });
    expect(sent.status).toBe(200);
    const { id } = await sent.json() as { id: string };
    const read = await fetch(`${server.url}/api/deliveries/${id}`, { headers: server.auth });
    expect(read.status).toBe(200);
    const delivery = await read.json() as { body: unknown; source: string };
    expect(delivery.source).toBe('github');
    expect(delivery.body).toEqual({ event: 'push' });
  });
});
