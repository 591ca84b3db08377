import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';

/**
 * The OpenAPI document, generated from the same TypeBox schemas that validate
 * and serialize the routes. Served at `/api/openapi.json` without a token.
 * Register before the routes it describes.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Reception',
        version: '0.1.0',
        description: 'A self-hosted receiver for webhooks. Send with POST /api/webhook/{source}; read with a bearer token.',
      },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      },
      security: [{ bearer: [] }],
    },
  });
}

/** Adds the `GET /api/openapi.json` route; call after every route is registered. */
export function serveOpenApi(app: FastifyInstance): void {
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
