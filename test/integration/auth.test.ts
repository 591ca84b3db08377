import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { deliver, essence, expectFetchProblem, readDelivery } from '../helpers/exchange.js';

/** CONTRACT 3 (token on every read route) and 5 (health and metrics). */
describe('auth on the read API', () => {
  let server: RunningApp;
  let id: string;
  beforeAll(async () => {
    // Hundreds of wrong tokens from one address, each to be answered 401:
    // throttling them (429) is wrong-token-throttle.test.ts's subject.
    server = await startApp({ wrongTokenThrottle: { freeAttempts: Number.MAX_SAFE_INTEGER } });
    ({ id } = await deliver(server, 'auth', '{"secret":"data"}'));
  });
  afterAll(async () => {
    await server.close();
  });

  const routes = (): Array<[string, string]> => [
    ['GET', '/api/deliveries'],
    ['GET', '/api/deliveries?source=auth&limit=5'],
    ['GET', `/api/deliveries/${id}`],
    ['GET', `/api/deliveries/${id}/raw`],
    ['DELETE', `/api/deliveries/${id}`],
    ['GET', '/api/sources'],
    ['GET', '/api/deliveries/unknown-id'],
    ['DELETE', '/api/deliveries/unknown-id'],
    // Ids that no route parameter takes (a bad percent-escape, longer than the router's limit) and an empty one.
    ['GET', '/api/deliveries/%zz'],
    ['GET', `/api/deliveries/${'x'.repeat(1001)}`],
    ['GET', '/api/deliveries/'],
  ];

  const badCredentials = (): Array<[string, Record<string, string>]> => [
    ['no Authorization header', {}],
    ['an empty Authorization header', { authorization: '' }],
    ['"Bearer" and no token', { authorization: 'Bearer' }],
    ['"Bearer " and a blank token', { authorization: 'Bearer  ' }],
    ['a wrong token', { authorization: 'Bearer wrong-token' }],
    ['the token with a different case', { authorization: `Bearer ${server.token.toUpperCase()}` }],
    ['the token with one character less', { authorization: `Bearer ${server.token.slice(0, -1)}` }],
    ['the token with a character more', { authorization: `Bearer ${server.token}x` }],
    ['the token and more words', { authorization: `Bearer ${server.token} ${server.token}` }],
    ['the Basic scheme with the token', { authorization: `Basic ${server.token}` }],
    [
      'the Basic scheme with the token as user:password',
      { authorization: `Basic ${Buffer.from(`${server.token}:${server.token}`).toString('base64')}` },
    ],
    ['the Token scheme', { authorization: `Token ${server.token}` }],
    ['the bare token', { authorization: server.token }],
    ['the token in a cookie', { cookie: `token=${server.token}` }],
    ['the token in another header', { 'x-api-token': server.token }],
  ];

  it('refuses every read route with every bad credential: 401 unauthorized, nothing leaked, nothing deleted', async () => {
    for (const [method, path] of routes()) {
      for (const [name, headers] of badCredentials()) {
        const res = await fetch(`${server.url}${path}${path.includes('?') ? '&' : '?'}token=${server.token}`, {
          method,
          headers,
        });
        const text = await res.clone().text();
        expect(res.status, `${method} ${path} with ${name}: ${text}`).toBe(401);
        expect(res.headers.get('www-authenticate'), `${method} ${path} with ${name}`).toBe('Bearer');
        await expectFetchProblem(res, 'unauthorized');
        expect(text).not.toContain('secret');
      }
    }
    // The DELETE attempts above did nothing.
    expect((await readDelivery(server, id)).body).toEqual({ secret: 'data' });
  });

  it('tells a missing token, another scheme, a wrong token and a stale session cookie apart in the detail', async () => {
    const detail = async (headers: Record<string, string>): Promise<string> => {
      const res = await fetch(`${server.url}/api/sources`, { headers });
      expect(res.status).toBe(401);
      return ((await res.json()) as { detail: string }).detail;
    };
    const missing = await detail({});
    const basic = await detail({ authorization: `Basic ${server.token}` });
    const wrong = await detail({ authorization: 'Bearer wrong-token' });
    const cookie = await detail({ cookie: 'reception_session=stale' });
    expect(missing).toBe(
      'No API token was sent: send it as "Authorization: Bearer <token>" (the server\'s token is RECEPTION_TOKEN, or the file "token" in its data directory).',
    );
    expect(basic).toBe('The Authorization header does not carry a Bearer token: send it as "Authorization: Bearer <token>".');
    expect(wrong).toBe(
      'The API token is wrong: it is not this server\'s token (RECEPTION_TOKEN, or the file "token" in its data directory).',
    );
    expect(cookie).toContain('The session cookie is not valid');
    expect(new Set([missing, basic, wrong, cookie]).size).toBe(4);
    for (const text of [missing, basic, wrong, cookie]) expect(text).not.toContain(server.token);
  });

  it('lets the right token through on every read route', async () => {
    const expected: Record<string, number> = {
      'GET /api/deliveries': 200,
      'GET /api/deliveries?source=auth&limit=5': 200,
      [`GET /api/deliveries/${id}`]: 200,
      [`GET /api/deliveries/${id}/raw`]: 200,
      [`DELETE /api/deliveries/${id}`]: 204,
      'GET /api/sources': 200,
      'GET /api/deliveries/unknown-id': 404,
      'DELETE /api/deliveries/unknown-id': 404,
      'GET /api/deliveries/%zz': 404,
      [`GET /api/deliveries/${'x'.repeat(1001)}`]: 404,
      'GET /api/deliveries/': 404,
    };
    for (const [method, path] of routes()) {
      const res = await fetch(`${server.url}${path}`, { method, headers: server.auth });
      expect(res.status, `${method} ${path}`).toBe(expected[`${method} ${path}`]);
      if (res.status === 404) await expectFetchProblem(res, 'not_found');
    }
    // The first GETs saw the delivery; the DELETE removed it.
    const gone = await fetch(`${server.url}/api/deliveries/${id}`, { headers: server.auth });
    await expectFetchProblem(gone, 'not_found');
  });

  it('answers a path under /api/ that names no route 404, with or without the token', async () => {
    const unknown: Array<[string, string]> = [
      ['GET', '/api/nope'],
      ['POST', '/api/webhooks/typo'],
      ['GET', '/api/sour%zzces'],
      ['GET', '/api/deliveries%zz'],
    ];
    for (const [method, path] of unknown) {
      for (const headers of [{}, { authorization: 'Bearer wrong-token' }, server.auth]) {
        const res = await fetch(`${server.url}${path}`, { method, headers });
        expect(res.status, `${method} ${path} with ${JSON.stringify(headers)}`).toBe(404);
        const { detail } = (await res.clone().json()) as { detail: string };
        // A sender's slip in the webhook URL is told where webhooks go.
        expect(detail.endsWith('Webhooks are sent as POST /api/webhook/{source}.'), detail).toBe(path.includes('webhook'));
        await expectFetchProblem(res, 'not_found');
      }
    }
  });

  it('accepts the token in a header with extra spaces after "Bearer"', async () => {
    const res = await fetch(`${server.url}/api/sources`, { headers: { authorization: `Bearer   ${server.token}` } });
    expect(res.status).toBe(200);
  });

  it('needs no token to send a webhook', async () => {
    const res = await fetch(`${server.url}/api/webhook/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(200);
  });

  it('answers /healthz and /readyz without a token', async () => {
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(essence(ready.headers.get('content-type'))).toBe('application/json');
  });

  it('answers /healthz and /readyz with a wrong token too', async () => {
    expect((await fetch(`${server.url}/healthz`, { headers: { authorization: 'Bearer nope' } })).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`, { headers: { authorization: 'Bearer nope' } })).status).toBe(200);
  });

  it('answers /metrics as Prometheus text that counts deliveries', async () => {
    await deliver(server, 'metered', '{}');
    const res = await fetch(`${server.url}/metrics`, { headers: server.auth });
    expect(res.status).toBe(200);
    expect(essence(res.headers.get('content-type'))).toBe('text/plain');
    const text = await res.text();
    expect(text).toContain('# TYPE reception_deliveries_total counter');
    const line = text.split('\n').find((l) => l.startsWith('reception_deliveries_total{') && l.includes('"metered"'));
    expect(line, text).toBeDefined();
    expect(Number(line?.split(' ').pop())).toBeGreaterThanOrEqual(1);
  });
});
