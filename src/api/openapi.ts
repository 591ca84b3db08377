import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { PROBLEM_MEDIA_TYPE, problemCatalogue, type ProblemCode } from '../platform/errors/problem-catalogue.js';
import { MAX_SOURCE_CHARS } from '../platform/http/source-name.js';
import { withExamples } from './openapi-examples.js';
import { documentSchemasTo2020 } from './openapi-json-schema.js';
import { API_TAGS, withOperations } from './openapi-operations.js';
import { ProblemSchema, ReceivedSchema } from './schemas.js';

/** What the receive route can refuse with (docs/errors.md), grouped by status for its OpenAPI entry. */
const RECEIVE_REFUSALS: readonly ProblemCode[] = [
  'invalid_source',
  'empty_body',
  'invalid_json',
  'invalid_form',
  'invalid_multipart',
  'bad_request',
  'json_not_object',
  'signature_invalid',
  'unknown_source',
  'method_not_allowed',
  'request_timeout',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'headers_too_large',
  'expectation_failed',
  'internal_error',
  'not_implemented',
  'storage_unavailable',
];

function refusalResponses(): Record<string, object> {
  const byStatus = new Map<number, string[]>();
  for (const code of RECEIVE_REFUSALS) {
    const { status } = problemCatalogue[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const schema = { ...ProblemSchema, $id: undefined };
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => [
      String(status),
      { description: codes.join(', '), content: { [PROBLEM_MEDIA_TYPE]: { schema } } },
    ]),
  );
}

/**
 * The receive route is a plain `node:http` handler in front of Fastify
 * (edge/webhook-handler.ts), so no Fastify route describes it: its entry is
 * added here, from the same schemas and the error catalogue.
 */
const RECEIVE_PATH = {
  post: {
    description:
      'By default a JSON object or form data. A source in the config file may take multipart/form-data, text/plain, XML, ' +
      'or any type (`accept`), and answer with a status from 200 to 299, headers and a body of its own (`response`).',
    parameters: [
      {
        name: 'source',
        in: 'path',
        required: true,
        description: `The inbox to keep it in: 1 to ${MAX_SOURCE_CHARS} characters, no "/" or control characters`,
        schema: { type: 'string', minLength: 1, maxLength: MAX_SOURCE_CHARS },
      },
    ],
    requestBody: {
      required: true,
      content: {
        'application/json': { schema: { type: 'object' } },
        'application/x-www-form-urlencoded': { schema: { type: 'object' } },
        // A Media Type Object has no description of its own: each says it in its schema.
        'multipart/form-data': { schema: { type: 'object', description: 'With `accept: [multipart]`' } },
        'text/plain': { schema: { type: 'string', description: 'With `accept: [text]`' } },
        'application/xml': {
          schema: { type: 'string', description: 'With `accept: [xml]`; text/xml and application/*+xml too' },
        },
        '*/*': { schema: { description: 'With `accept: [any]`: any type, or none' } },
      },
    },
    responses: {
      200: {
        description:
          'Stored (committed), or a duplicate of a delivery stored before. A source with its own `response` answers with its status (200 to 299), headers and body instead',
        content: { 'application/json': { schema: ReceivedSchema } },
      },
      ...refusalResponses(),
    },
  },
};

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
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // The server that serves this document (a relative URL: wherever Reception runs).
      servers: [{ url: '/' }],
      tags: API_TAGS.map((tag) => ({ ...tag })),
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      },
      security: [{ bearer: [] }],
    },
    transformObject: (documents) => {
      if (!('openapiObject' in documents)) return documents.swaggerObject;
      const doc = documents.openapiObject;
      doc.paths = Object.assign({ '/api/webhook/{source}': structuredClone(RECEIVE_PATH) }, doc.paths);
      withExamples(doc.paths as Parameters<typeof withExamples>[0]);
      withOperations(doc.paths as Parameters<typeof withOperations>[0]);
      documentSchemasTo2020(doc);
      return doc;
    },
  });
}

/** Adds the `GET /api/openapi.json` route; call after every route is registered. */
export function serveOpenApi(app: FastifyInstance): void {
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
