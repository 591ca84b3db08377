import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { expectFetchProblem } from '../helpers/exchange.js';

/**
 * Wrong API tokens are throttled per client address: 5 in a row are
 * answered 401; each further one `429 rate_limited` with a Retry-After
 * that doubles. The right token is accepted at once all the while.
 * The server trusts 127.0.0.1 as a proxy, so each test is its own
 * client through `X-Forwarded-For`.
 */
describe('throttling wrong tokens', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp({ trustedProxies: ['127.0.0.1'] });
  });
  afterAll(async () => {
    await server.close();
  });

  const login = async (client: string, token: string): Promise<Response> =>
    fetch(`${server.url}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
      body: JSON.stringify({ token }),
    });
  const read = async (client: string, headers: Record<string, string>, path = '/api/deliveries'): Promise<Response> =>
    fetch(`${server.url}${path}`, { headers: { 'x-forwarded-for': client, ...headers } });

  const expectThrottled = async (answer: Response): Promise<number> => {
    expect(answer.status).toBe(429);
    const retryAfter = Number(answer.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    const problem = (await answer.clone().json()) as { detail: string };
    expect(problem.detail).toMatch(/wrong tokens/);
    await expectFetchProblem(answer, 'rate_limited');
    return retryAfter;
  };

  it('answers the 6th wrong login in a row 429 with a Retry-After that grows, and still takes the right token at once', async () => {
    const client = '203.0.113.10';
    for (let i = 0; i < 5; i++) await expectFetchProblem(await login(client, `wrong-${i}`), 'unauthorized');
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) waits.push(await expectThrottled(await login(client, 'wrong-again')));
    expect(waits).toEqual([1, 2, 4, 8]);
    // The right token, at once, from the throttled address: accepted, with the cookie.
    const started = performance.now();
    const right = await login(client, server.token);
    expect(right.status).toBe(204);
    expect(performance.now() - started).toBeLessThan(500);
    expect(right.headers.get('set-cookie')).toMatch(/^reception_session=/);
    // Another address is not throttled.
    await expectFetchProblem(await login('203.0.113.11', 'wrong'), 'unauthorized');
  });

  it('counts wrong Bearer tokens and wrong session cookies on the API in the same table as the login', async () => {
    const client = '203.0.113.20';
    for (let i = 0; i < 3; i++) await expectFetchProblem(await login(client, 'wrong'), 'unauthorized');
    await expectFetchProblem(await read(client, { authorization: 'Bearer wrong' }), 'unauthorized');
    await expectFetchProblem(await read(client, { cookie: 'reception_session=forged' }), 'unauthorized');
    await expectThrottled(await read(client, { authorization: 'Bearer wrong' }));
    await expectThrottled(await read(client, { cookie: 'reception_session=forged' }, '/api/sources'));
    await expectThrottled(await read(client, { authorization: 'Bearer wrong' }, '/api/stream'));
    // A path the router refuses under /api/deliveries/ checks the token too: no way around the throttle there.
    await expectThrottled(await read(client, { authorization: 'Bearer wrong' }, '/api/deliveries/%zz'));
    await expectThrottled(await login(client, 'wrong'));
    // The right token is accepted at once, by every route.
    expect((await read(client, server.auth)).status).toBe(200);
    expect((await read(client, server.auth, '/api/deliveries/%zz')).status).toBe(404);
    expect((await login(client, server.token)).status).toBe(204);
    // A request with no token at all is no guess: 401, and not counted.
    await expectFetchProblem(await read(client, {}), 'unauthorized');
  });

  it('does not count requests without any token, nor right ones', async () => {
    const client = '203.0.113.30';
    for (let i = 0; i < 20; i++) {
      await expectFetchProblem(await read(client, {}), 'unauthorized');
      expect((await read(client, server.auth)).status).toBe(200);
    }
    for (let i = 0; i < 5; i++) await expectFetchProblem(await login(client, 'wrong'), 'unauthorized');
    await expectThrottled(await login(client, 'wrong'));
  });

  it('counts an IPv6 client by its /64 network', async () => {
    for (let i = 1; i <= 5; i++) await expectFetchProblem(await login(`2001:db8:1:2::${i}`, 'wrong'), 'unauthorized');
    await expectThrottled(await login('2001:db8:1:2:ffff::7', 'wrong'));
    await expectFetchProblem(await login('2001:db8:1:3::1', 'wrong'), 'unauthorized');
  });
});

describe('throttling wrong tokens without a trusted proxy', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp();
  });
  afterAll(async () => {
    await server.close();
  });

  it('counts by the socket peer, whatever X-Forwarded-For says', async () => {
    for (let i = 0; i < 5; i++) {
      const answer = await fetch(`${server.url}/api/deliveries`, {
        headers: { authorization: 'Bearer wrong', 'x-forwarded-for': `198.51.100.${i}` },
      });
      await expectFetchProblem(answer, 'unauthorized');
    }
    const sixth = await fetch(`${server.url}/api/deliveries`, {
      headers: { authorization: 'Bearer wrong', 'x-forwarded-for': '198.51.100.99' },
    });
    expect(sixth.status).toBe(429);
    await sixth.arrayBuffer();
    expect((await fetch(`${server.url}/api/deliveries`, { headers: server.auth })).status).toBe(200);
  });
});
