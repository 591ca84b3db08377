// Draft-07, as TypeBox writes the schemas (a tuple is `items: [...]`); ajv comes with Fastify.
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_EXAMPLES } from '../../src/api/openapi-examples.js';
import { startApp, type RunningApp } from '../helpers/app.js';

interface Media {
  schema?: object;
  example?: unknown;
}
interface Operation {
  requestBody?: { content?: Record<string, Media> };
  responses?: Record<string, { content?: Record<string, Media> }>;
}

describe('OpenAPI document', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp();
  });
  afterAll(async () => {
    await server.close();
  });

  it('describes the read API from the route schemas', async () => {
    const answer = await fetch(`${server.url}/api/openapi.json`);
    expect(answer.status).toBe(200);
    const doc = (await answer.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/deliveries',
        '/api/deliveries/{id}',
        '/api/deliveries/{id}/raw',
        '/api/deliveries/{id}/files/{index}',
        '/api/sources',
      ]),
    );
    // A file of a multipart delivery (CONTRACT 9): binary, with its refusals.
    const file = doc.paths['/api/deliveries/{id}/files/{index}']?.get as {
      parameters: Array<{ name: string; in: string }>;
      responses: Record<string, { content?: Record<string, unknown> }>;
    };
    expect(file.parameters.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['path:id', 'path:index']);
    expect(Object.keys(file.responses['200']?.content ?? {})).toEqual(['application/octet-stream']);
    expect(Object.keys(file.responses)).toEqual(expect.arrayContaining(['200', '401', '404']));
    expect(doc.paths['/api/deliveries']?.get).toMatchObject({
      parameters: expect.arrayContaining([expect.objectContaining({ name: 'limit', in: 'query' })]),
    });
    // A delivery by its id or its seq (the short number the page shows), with an example of each.
    for (const path of ['/api/deliveries/{id}', '/api/deliveries/{id}/raw']) {
      const { parameters } = doc.paths[path]?.get as {
        parameters: Array<{ name: string; description?: string; examples?: object }>;
      };
      const id = parameters.find((p) => p.name === 'id');
      expect(id?.description, path).toContain('seq');
      expect(Object.keys(id?.examples ?? {}), path).toContain('42');
    }
  });

  it('describes every forwarding route of the contract (CONTRACT 6)', async () => {
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes: Array<[string, string]> = [
      ['/api/destinations', 'get'],
      ['/api/destinations/{name}/pause', 'post'],
      ['/api/destinations/{name}/resume', 'post'],
      ['/api/deliveries/{id}/forwards', 'get'],
      ['/api/forwards', 'get'],
      ['/api/forwards/retry', 'post'],
      ['/api/forwards/{id}/cancel', 'post'],
      ['/api/deliveries/{id}/forward', 'post'],
      ['/api/destinations/{name}/claim', 'post'],
      ['/api/forwards/{id}/ack', 'post'],
      ['/api/forwards/{id}/nack', 'post'],
    ];
    for (const [path, method] of routes) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
  });

  it("describes a broker destination's connection in the destinations list (CONTRACT 7)", async () => {
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
      paths: Record<string, { get?: { responses: Record<string, { content: Record<string, { schema: unknown }> }> } }>;
    };
    const schema = doc.paths['/api/destinations']?.get?.responses['200']?.content['application/json']?.schema;
    expect(schema).toMatchObject({
      properties: {
        items: {
          items: {
            properties: {
              connection: {
                anyOf: expect.arrayContaining([
                  expect.objectContaining({
                    properties: expect.objectContaining({ state: expect.anything(), lastError: expect.anything() }),
                  }),
                ]),
              },
            },
          },
        },
      },
    });
  });

  it('describes the receive route, which needs no token, and its answer as the server gives it', async () => {
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
      paths: Record<
        string,
        {
          post?: {
            security?: unknown[];
            responses: Record<
              string,
              { content: Record<string, { schema: { required?: string[]; properties?: Record<string, unknown> } }> }
            >;
          };
        }
      >;
    };
    const post = doc.paths['/api/webhook/{source}']?.post;
    expect(post?.security).toEqual([]);
    expect(Object.keys((post as { requestBody: { content: object } } | undefined)?.requestBody.content ?? {})).toEqual([
      'application/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'text/plain',
      'application/xml',
      '*/*',
    ]);
    expect(Object.keys(post?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '400', '401', '405', '413', '415', '422', '503']),
    );
    const schema = post?.responses['200']?.content['application/json']?.schema;
    expect(schema?.required).toEqual(['id', 'source', 'receivedAt']);
    expect(post?.responses['413']?.content['application/problem+json']?.schema.required).toEqual([
      'type',
      'title',
      'status',
      'detail',
      'code',
    ]);

    const answer = await fetch(`${server.url}/api/webhook/openapi`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(answer.status).toBe(200);
    const received = (await answer.json()) as Record<string, unknown>;
    for (const key of schema?.required ?? []) expect(received).toHaveProperty(key);
    for (const key of Object.keys(received)) expect(Object.keys(schema?.properties ?? {})).toContain(key);
  });

  it('has an example for each JSON request body and each JSON answer, valid against its own schema (README "API docs")', async () => {
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Operation>>;
    };
    const ajv = new Ajv({ strict: false, validateFormats: false });
    const routes: string[] = [];
    const missing: string[] = [];
    const invalid: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const route = `${method.toUpperCase()} ${path}`;
        routes.push(route);
        const media: Array<[string, Media]> = [
          ...Object.entries(operation.requestBody?.content ?? {}).map(([type, m]): [string, Media] => [
            `${route} request ${type}`,
            m,
          ]),
          ...Object.entries(operation.responses ?? {}).flatMap(([status, response]) =>
            Object.entries(response.content ?? {}).map(([type, m]): [string, Media] => [`${route} ${status} ${type}`, m]),
          ),
        ];
        for (const [name, { schema, example }] of media) {
          if (example === undefined) {
            missing.push(name);
            continue;
          }
          if (schema !== undefined && !ajv.validate(schema, example)) invalid.push(`${name}: ${ajv.errorsText()}`);
        }
      }
    }
    expect(missing).toEqual([]);
    expect(invalid).toEqual([]);
    // Every route has its entry, and no entry names a route that is not there.
    expect(Object.keys(ROUTE_EXAMPLES).sort()).toEqual(routes.sort());
  });
});
