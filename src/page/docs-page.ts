import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import { SECURITY_HEADERS } from './web-page.js';

/**
 * The API's reference at `/docs`: Swagger UI (swagger-ui-dist, from the
 * npm registry, served from this installation: no CDN) rendering
 * `/api/openapi.json`, under the same Content-Security-Policy as the inbox
 * page. Nothing is inline: the page loads Swagger UI's bundle and
 * stylesheet, then a small script of ours that starts it, all from
 * `/docs/assets/`. Swagger UI's check of the document against an online
 * validator is turned off (`validatorUrl: null`): the page talks to this
 * server only.
 */

const require = createRequire(import.meta.url);

/** swagger-ui-dist's folder in node_modules. */
function swaggerUiDir(): string {
  return dirname(require.resolve('swagger-ui-dist/package.json'));
}

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Reception API</title>
    <link rel="stylesheet" href="/docs/assets/swagger-ui.css" />
    <link rel="stylesheet" href="/docs/assets/docs.css" />
  </head>
  <body>
    <p class="reception-docs-back"><a href="/">← the inbox</a> · <a href="/api/openapi.json">openapi.json</a></p>
    <div id="swagger-ui"></div>
    <script src="/docs/assets/swagger-ui-bundle.js"></script>
    <script src="/docs/assets/docs.js"></script>
  </body>
</html>
`;

/** Starts Swagger UI on the document (a file, not inline: the policy allows scripts from this server only). */
const START = `'use strict';
window.addEventListener('DOMContentLoaded', function () {
  window.ui = window.SwaggerUIBundle({
    url: '/api/openapi.json',
    dom_id: '#swagger-ui',
    validatorUrl: null,
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
    tryItOutEnabled: false,
    persistAuthorization: false,
  });
});
`;

const STYLE = `.reception-docs-back { margin: 12px 20px 0; font-family: system-ui, sans-serif; font-size: 14px; }
.reception-docs-back a { color: #1e66b5; }
`;

/** The files of swagger-ui-dist that the page loads, and their types; nothing else of that folder is served. */
const FROM_SWAGGER_UI: Readonly<Record<string, string>> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
};

const OWN: Readonly<Record<string, { type: string; body: string }>> = {
  'docs.js': { type: 'text/javascript; charset=utf-8', body: START },
  'docs.css': { type: 'text/css; charset=utf-8', body: STYLE },
};

export const docsPage: FastifyPluginAsync = async (app) => {
  const dir = swaggerUiDir();
  const cache = new Map<string, Buffer>();

  app.get('/docs', { schema: { hide: true } }, async (_request, reply) =>
    reply.headers(SECURITY_HEADERS).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(PAGE),
  );

  app.get<{ Params: { file: string } }>('/docs/assets/:file', { schema: { hide: true } }, async (request, reply) => {
    const name = request.params.file;
    const own = Object.hasOwn(OWN, name) ? OWN[name] : undefined;
    const headers = reply.headers(SECURITY_HEADERS).header('cache-control', 'no-cache');
    if (own !== undefined) return headers.type(own.type).send(own.body);
    const type = Object.hasOwn(FROM_SWAGGER_UI, name) ? FROM_SWAGGER_UI[name] : undefined;
    if (type === undefined) throw new ProblemError('not_found', `There is no docs asset "${name.slice(0, 100)}".`);
    let body = cache.get(name);
    if (body === undefined) {
      body = await readFile(join(dir, name));
      cache.set(name, body);
    }
    return headers.type(type).send(body);
  });
};
