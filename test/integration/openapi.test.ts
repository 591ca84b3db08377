import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';

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
      expect.arrayContaining(['/api/deliveries', '/api/deliveries/{id}', '/api/deliveries/{id}/raw', '/api/sources']),
    );
    expect(doc.paths['/api/deliveries']?.get).toMatchObject({
      parameters: expect.arrayContaining([expect.objectContaining({ name: 'limit', in: 'query' })]),
    });
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
});
