import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';

describe('OpenAPI document', () => {
  let server: RunningApp;
  beforeAll(async () => { server = await startApp(); });
  afterAll(async () => { await server.close(); });

  it('describes the read API from the route schemas', async () => {
    const answer = await fetch(`${server.url}/api/openapi.json`);
    expect(answer.status).toBe(200);
    const doc = await answer.json() as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining([
      '/api/deliveries', '/api/deliveries/{id}', '/api/deliveries/{id}/raw', '/api/sources',
    ]));
    expect(doc.paths['/api/deliveries']?.get).toMatchObject({
      parameters: expect.arrayContaining([expect.objectContaining({ name: 'limit', in: 'query' })]),
    });
  });
});
