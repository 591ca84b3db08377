import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';

describe('JSON bodies on the API routes', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp();
  });
  afterAll(async () => {
    await server.close();
  });

  it('takes a DELETE that says application/json but has no body', async () => {
    const sent = await fetch(`${server.url}/api/webhook/j`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    const { id } = (await sent.json()) as { id: string };
    const deleted = await fetch(`${server.url}/api/deliveries/${id}`, {
      method: 'DELETE',
      headers: { ...server.auth, 'content-type': 'application/json' },
    });
    expect(deleted.status).toBe(204);
    expect((await fetch(`${server.url}/api/deliveries/${id}`, { headers: server.auth })).status).toBe(404);
  });

  it('deletes although the DELETE carries a JSON body that does not parse (a body there means nothing)', async () => {
    const sent = await fetch(`${server.url}/api/webhook/j`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    const { id } = (await sent.json()) as { id: string };
    const deleted = await fetch(`${server.url}/api/deliveries/${id}`, {
      method: 'DELETE',
      headers: { ...server.auth, 'content-type': 'application/json' },
      body: '{bad',
    });
    expect(deleted.status).toBe(204);
    expect((await fetch(`${server.url}/api/deliveries/${id}`, { headers: server.auth })).status).toBe(404);
  });

  it('answers a login with broken, missing or misshapen JSON as 400 invalid_body, which names the body, not a crash', async () => {
    for (const body of ['{"token":', 'token=abc', '', '[]', '{}', '{"token":["a","b"]}']) {
      const answer = await fetch(`${server.url}/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(answer.status, body).toBe(400);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = (await answer.json()) as { code: string; detail: string };
      expect(problem.code, body).toBe('invalid_body');
      expect(problem.detail, body).toMatch(/body/);
    }
  });
});
