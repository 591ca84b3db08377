import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { readDelivery, send, type DeliveryView, type Receipt } from '../helpers/exchange.js';

/** CONTRACT 2: the remote address follows X-Forwarded-For only behind a trusted proxy. */
async function deliverFrom(server: RunningApp, forwardedFor: string | string[] | undefined): Promise<DeliveryView> {
  const answer = await send(server, {
    path: '/api/webhook/forwarded',
    headers: { 'content-type': 'application/json', ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) },
    body: '{}',
  });
  expect(answer.status, answer.text).toBe(200);
  return readDelivery(server, (JSON.parse(answer.text) as Receipt).id);
}

describe('X-Forwarded-For behind a trusted proxy (127.0.0.1)', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp({ trustedProxies: ['127.0.0.1'] });
  });
  afterAll(async () => {
    await server.close();
  });

  it('takes the client from a one-hop chain', async () => {
    expect((await deliverFrom(server, '203.0.113.7')).remoteAddress).toBe('203.0.113.7');
  });

  it('takes the rightmost untrusted hop of a longer chain', async () => {
    expect((await deliverFrom(server, '198.51.100.1, 203.0.113.7')).remoteAddress).toBe('203.0.113.7');
  });

  it('skips trusted hops at the right of the chain', async () => {
    expect((await deliverFrom(server, '203.0.113.7, 127.0.0.1')).remoteAddress).toBe('203.0.113.7');
  });

  it('joins repeated X-Forwarded-For headers into one chain', async () => {
    expect((await deliverFrom(server, ['198.51.100.1', '203.0.113.9'])).remoteAddress).toBe('203.0.113.9');
  });

  it('reads IPv6 clients', async () => {
    expect((await deliverFrom(server, '2001:db8::1')).remoteAddress).toBe('2001:db8::1');
  });

  it('keeps the socket peer when there is no X-Forwarded-For', async () => {
    expect((await deliverFrom(server, undefined)).remoteAddress).toBe('127.0.0.1');
  });

  it('does not take a hop that is not an IP address', async () => {
    const address = (await deliverFrom(server, 'not-an-ip')).remoteAddress;
    expect(address).not.toBe('not-an-ip');
    expect(address).toBe('127.0.0.1');
  });

  it('still keeps the header itself as sent', async () => {
    const delivery = await deliverFrom(server, '198.51.100.1, 203.0.113.7');
    expect(delivery.headers).toContainEqual(['x-forwarded-for', '198.51.100.1, 203.0.113.7']);
  });
});

describe('X-Forwarded-For without a trusted proxy', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp();
  });
  afterAll(async () => {
    await server.close();
  });

  it.each(['203.0.113.7', '198.51.100.1, 203.0.113.7', '127.0.0.1'])('ignores %j and keeps 127.0.0.1', async (chain) => {
    expect((await deliverFrom(server, chain)).remoteAddress).toBe('127.0.0.1');
  });
});

describe('X-Forwarded-For with a trusted proxy that is not the peer', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp({ trustedProxies: ['10.0.0.0/8'] });
  });
  afterAll(async () => {
    await server.close();
  });

  it('ignores the header from an untrusted peer', async () => {
    expect((await deliverFrom(server, '203.0.113.7')).remoteAddress).toBe('127.0.0.1');
  });
});
