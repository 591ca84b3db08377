import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { firstAnswer, sendUntilClose } from '../helpers/exchange.js';

describe('receive and read back', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp();
  });
  afterAll(async () => {
    await server.close();
  });

  it('stores a JSON object and reads it back by id', async () => {
    const sent = await fetch(`${server.url}/api/webhook/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"event":"push"}',
    });
    expect(sent.status).toBe(200);
    const { id } = (await sent.json()) as { id: string };
    const read = await fetch(`${server.url}/api/deliveries/${id}`, { headers: server.auth });
    expect(read.status).toBe(200);
    const delivery = (await read.json()) as { body: unknown; source: string };
    expect(delivery.source).toBe('github');
    expect(delivery.body).toEqual({ event: 'push' });
  });

  it('takes a request target in absolute form, as RFC 9112 asks of servers', async () => {
    const { host } = new URL(server.url);
    const body = '{"absolute":true}';
    const sent = firstAnswer(
      (
        await sendUntilClose(
          server,
          `POST http://${host}/api/webhook/absolute?x=1 HTTP/1.1\r\nHost: ${host}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        )
      ).answer,
    );
    expect(sent.status, sent.body).toBe(200);
    const { id } = JSON.parse(sent.body) as { id: string };
    const read = firstAnswer(
      (
        await sendUntilClose(
          server,
          `GET http://${host}/api/deliveries/${id} HTTP/1.1\r\nHost: ${host}\r\n` +
            `Authorization: Bearer ${server.token}\r\nConnection: close\r\n\r\n`,
        )
      ).answer,
    );
    expect(read.status, read.body).toBe(200);
    expect(JSON.parse(read.body)).toMatchObject({ id, source: 'absolute', query: 'x=1', body: { absolute: true } });
  });
});
