import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { tempDir } from '../helpers/temp-dir.js';
import { defaultWebDir, PAGE_CSP, webPage } from '../../src/page/web-page.js';
import { ensureWebBuilt } from '../helpers/web-build.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('serving the built page', () => {
  let server: RunningApp;
  let assets: string[];

  beforeAll(async () => {
    await ensureWebBuilt();
    server = await startApp();
    assets = readdirSync(join(ROOT, 'web', 'dist', 'assets'));
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  it('answers / with index.html, no token needed, under the strict policy', async () => {
    const response = await fetch(`${server.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const html = await response.text();
    // Nothing inline: the only script and stylesheet are files under /assets/.
    expect(html).toMatch(/<script type="module" crossorigin src="\/assets\/[\w-]+\.js"><\/script>/);
    expect(html).toMatch(/<link rel="stylesheet" crossorigin href="\/assets\/[\w-]+\.css">/);
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=/);
  });

  it('serves the hashed assets with their types, cached for good', async () => {
    const script = assets.find((name) => name.endsWith('.js'));
    const style = assets.find((name) => name.endsWith('.css'));
    for (const [name, type] of [
      [script, 'text/javascript; charset=utf-8'],
      [style, 'text/css; charset=utf-8'],
    ]) {
      const response = await fetch(`${server.url}/assets/${name}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(type);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('answers 404 problems for unknown assets and any path outside the assets folder', async () => {
    for (const path of [
      '/assets/nope.js',
      '/assets/..%2F..%2Fpackage.json',
      '/assets/%2e%2e%2findex.html',
      '/assets/.hidden.js',
      '/assets/x.ts',
      '/index.html',
      '/web/dist/index.html',
    ]) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
  });

  it('leaves the API behind its token', async () => {
    expect((await fetch(`${server.url}/api/sources`)).status).toBe(401);
  });

  it('finds web/dist from src/page/ and from dist/src/page/', () => {
    expect(defaultWebDir()).toBe(join(ROOT, 'web', 'dist'));
    expect(defaultWebDir(join(ROOT, 'dist', 'src', 'page', 'web-page.js'))).toBe(join(ROOT, 'web', 'dist'));
  });

  it('says to run `npm run build` when the page was never built', async () => {
    const empty = tempDir();
    const app = Fastify();
    await app.register(webPage, { dir: join(empty.path, 'dist') });
    try {
      const response = await app.inject({ method: 'GET', url: '/' });
      expect(response.statusCode).toBe(503);
      expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(response.body).toContain('npm run build');
    } finally {
      await app.close();
      empty.remove();
    }
  });
});
