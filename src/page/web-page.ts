import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { ProblemError } from '../platform/errors/problem-catalogue.js';

export interface WebPageOptions {
  /** The built page (`web/dist`); found from this file's place when not given. */
  dir?: string;
}

/**
 * The page may load only its own script and styles and talk only to this
 * server: a payload that ever reached the DOM as HTML still could not run.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS = {
  'content-security-policy': PAGE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
} as const;

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

// Vite's hashed file names: letters, digits, `-`, `_` and dots, never a leading dot.
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,200}$/;

/**
 * `web/dist` of this package: the nearest folder above this file that holds
 * package.json (src/page/ under Vitest, dist/src/page/ once compiled).
 */
export function defaultWebDir(from = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'web', 'dist');
    const parent = dirname(dir);
    if (parent === dir) return join(dirname(from), 'web', 'dist');
    dir = parent;
  }
}

async function readIfThere(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'EISDIR')
      return undefined;
    throw error;
  }
}

function notBuilt(reply: FastifyReply): FastifyReply {
  return reply
    .code(503)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .type('text/plain; charset=utf-8')
    .send(
      'The web page has not been built. Run `npm run build` (`npm start` does it first), then reload.\n' +
        'The API under /api works without it.\n',
    );
}

/** Serves the inbox page built by Vite: `index.html` at `/`, hashed files under `/assets/`. */
export const webPage: FastifyPluginAsync<WebPageOptions> = async (app, options) => {
  const dir = options.dir ?? defaultWebDir();

  app.get('/', { schema: { hide: true } }, async (_request, reply) => {
    const html = await readIfThere(join(dir, 'index.html'));
    if (html === undefined) return notBuilt(reply);
    return reply.headers(SECURITY_HEADERS).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(html);
  });

  app.get<{ Params: { file: string } }>('/assets/:file', { schema: { hide: true } }, async (request, reply) => {
    const name = request.params.file;
    const type = CONTENT_TYPES[extname(name).toLowerCase()];
    const missing = new ProblemError('not_found', `There is no asset "${name.slice(0, 100)}".`);
    if (!ASSET_NAME.test(name) || type === undefined) throw missing;
    const body = await readIfThere(join(dir, 'assets', name));
    if (body === undefined) throw missing;
    return reply.headers(SECURITY_HEADERS).header('cache-control', 'public, max-age=31536000, immutable').type(type).send(body);
  });
};
