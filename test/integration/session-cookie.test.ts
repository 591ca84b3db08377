import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';

/** Logs in and out with these extra headers; the session cookie of each answer. */
async function cookies(server: RunningApp, headers: Record<string, string>): Promise<{ login: string; logout: string }> {
  const login = await fetch(`${server.url}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ token: server.token }),
  });
  expect(login.status).toBe(204);
  const logout = await fetch(`${server.url}/api/session`, { method: 'DELETE', headers });
  expect(logout.status).toBe(204);
  return { login: login.headers.get('set-cookie') ?? '', logout: logout.headers.get('set-cookie') ?? '' };
}

const SECURE = /;\s*Secure(;|$)/i;

/**
 * The session cookie is `Secure` when the browser reached Reception over
 * https: through a TLS proxy in RECEPTION_TRUSTED_PROXIES that says so in
 * `X-Forwarded-Proto`. Reception itself only speaks plain http.
 */
describe('the session cookie behind a trusted TLS proxy', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp({ trustedProxies: ['127.0.0.1'] });
  });
  afterAll(async () => {
    await server.close();
  });

  it.each([['https'], ['HTTPS'], ['http, https']])(
    'is Secure when the trusted peer says X-Forwarded-Proto: %s',
    async (proto) => {
      const { login, logout } = await cookies(server, { 'x-forwarded-proto': proto });
      expect(login).toMatch(/HttpOnly/);
      expect(login).toMatch(SECURE);
      expect(logout).toMatch(SECURE);
    },
  );

  it.each([['http'], ['https, http'], ['wss'], ['']])(
    'is not Secure when the trusted peer says X-Forwarded-Proto: %j',
    async (proto) => {
      const { login, logout } = await cookies(server, { 'x-forwarded-proto': proto });
      expect(login).toMatch(/HttpOnly/);
      expect(login).not.toMatch(SECURE);
      expect(logout).not.toMatch(SECURE);
    },
  );

  it('is not Secure over plain http without X-Forwarded-Proto', async () => {
    const { login } = await cookies(server, {});
    expect(login).toMatch(/SameSite=Strict/);
    expect(login).not.toMatch(SECURE);
  });
});

describe('the session cookie without a trusted proxy', () => {
  let untrusted: RunningApp;
  let none: RunningApp;
  beforeAll(async () => {
    // The test connects from 127.0.0.1, which neither trusts.
    untrusted = await startApp({ trustedProxies: ['10.0.0.0/8', '::1'] });
    none = await startApp();
  });
  afterAll(async () => {
    await untrusted.close();
    await none.close();
  });

  it('is not Secure when an untrusted peer sends X-Forwarded-Proto: https', async () => {
    for (const server of [untrusted, none]) {
      const { login, logout } = await cookies(server, { 'x-forwarded-proto': 'https', 'x-forwarded-for': '10.0.0.1' });
      expect(login).toMatch(/HttpOnly/);
      expect(login).not.toMatch(SECURE);
      expect(logout).not.toMatch(SECURE);
    }
  });

  it('is not Secure over plain http', async () => {
    const { login } = await cookies(none, {});
    expect(login).toMatch(/HttpOnly; SameSite=Strict/);
    expect(login).not.toMatch(SECURE);
  });
});
