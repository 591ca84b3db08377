import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
// JSON Schema 2020-12, the dialect of OpenAPI 3.1 (TypeBox's draft-07 tuples are rewritten for the document).
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_EXAMPLES } from '../../src/api/openapi-examples.js';
import { API_TAGS, ROUTE_OPERATIONS } from '../../src/api/openapi-operations.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { tempDir } from '../helpers/temp-dir.js';

interface Media {
  schema?: object;
  example?: unknown;
}
interface Operation {
  tags?: string[];
  operationId?: string;
  summary?: string;
  requestBody?: { content?: Record<string, Media> };
  responses?: Record<string, { content?: Record<string, Media> }>;
}
interface Document {
  openapi: string;
  tags?: Array<{ name: string }>;
  paths: Record<string, Record<string, Operation>>;
}

/** Every operation of the document as `METHOD path`. */
function operationsOf(doc: Document): Array<[string, Operation]> {
  return Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]): [string, Operation] => [`${method.toUpperCase()} ${path}`, operation]),
  );
}

/** Every request and response schema of an operation, named. */
function schemasOf(route: string, operation: Operation): Array<[string, Media]> {
  return [
    ...Object.entries(operation.requestBody?.content ?? {}).map(([type, m]): [string, Media] => [`${route} request ${type}`, m]),
    ...Object.entries(operation.responses ?? {}).flatMap(([status, response]) =>
      Object.entries(response.content ?? {}).map(([type, m]): [string, Media] => [`${route} ${status} ${type}`, m]),
    ),
  ];
}

/** What swagger-parser takes: its OpenAPI.Document type. */
type ParserInput = NonNullable<Parameters<SwaggerParser.ApiCallback>[1]>;

const run = promisify(execFile);
const REDOCLY = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');

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
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const routes: string[] = [];
    const missing: string[] = [];
    const invalid: string[] = [];
    for (const [route, operation] of operationsOf(doc as Document)) {
      routes.push(route);
      for (const [name, { schema, example }] of schemasOf(route, operation)) {
        if (example === undefined) {
          missing.push(name);
          continue;
        }
        if (schema !== undefined && !ajv.validate(schema, example)) invalid.push(`${name}: ${ajv.errorsText()}`);
      }
    }
    expect(missing).toEqual([]);
    expect(invalid).toEqual([]);
    // Every route has its entry, and no entry names a route that is not there.
    expect(Object.keys(ROUTE_EXAMPLES).sort()).toEqual(routes.sort());
  });

  it('is a valid OpenAPI 3.1 document: swagger-parser accepts it, and every schema compiles as JSON Schema 2020-12', async () => {
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as Document;
    expect(doc.openapi).toBe('3.1.0');
    // It dereferences the document in place: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(doc) as unknown as ParserInput)).resolves.toBeDefined();

    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const failed: string[] = [];
    let compiled = 0;
    for (const [route, operation] of operationsOf(doc)) {
      for (const [name, { schema }] of schemasOf(route, operation)) {
        if (schema === undefined) continue;
        try {
          ajv.compile(schema);
          compiled += 1;
        } catch (error) {
          failed.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
    expect(failed).toEqual([]);
    expect(compiled).toBeGreaterThan(50);
  });

  it('has a tag, a unique camelCase operationId and a one-line summary on every operation', async () => {
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as Document;
    const tagNames = (doc.tags ?? []).map((t) => t.name);
    expect(tagNames).toEqual(API_TAGS.map((t) => t.name));
    const problems: string[] = [];
    const ids = new Map<string, string>();
    const used = new Set<string>();
    for (const [route, { tags, operationId, summary }] of operationsOf(doc)) {
      if (tags === undefined || tags.length === 0) problems.push(`${route}: no tags`);
      for (const tag of tags ?? []) {
        if (!tagNames.includes(tag)) problems.push(`${route}: tag ${tag} is not among the document's tags`);
        used.add(tag);
      }
      if (operationId === undefined || !/^[a-z][a-zA-Z0-9]*$/.test(operationId))
        problems.push(`${route}: operationId ${operationId} is not camelCase`);
      else if (ids.has(operationId)) problems.push(`${route}: operationId ${operationId} is ${ids.get(operationId)}'s too`);
      else ids.set(operationId, route);
      if (summary === undefined || summary.trim() === '' || summary.includes('\n')) problems.push(`${route}: summary ${summary}`);
    }
    expect(problems).toEqual([]);
    // Each area has a route, and every route is in the table (a new route needs its entry), none left over.
    expect([...used].sort()).toEqual([...tagNames].sort());
    expect(Object.keys(ROUTE_OPERATIONS).sort()).toEqual(
      operationsOf(doc)
        .map(([route]) => route)
        .sort(),
    );
  });

  it('passes `redocly lint` (its recommended rules) without an error', async () => {
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as Document;
    const dir = tempDir();
    try {
      const file = join(dir.path, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc));
      const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
      // It exits 1 when it finds an error; the JSON report is on stdout either way.
      const { stdout } = await run(process.execPath, [REDOCLY, 'lint', '--format=json', file], { env, cwd: dir.path }).catch(
        (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
      );
      const report = JSON.parse(stdout) as {
        totals: { errors: number };
        problems: Array<{ ruleId: string; severity: string; message: string; location?: Array<{ pointer?: string }> }>;
      };
      const errors = report.problems
        .filter((p) => p.severity === 'error')
        .map((p) => `${p.ruleId} ${p.location?.[0]?.pointer ?? ''}: ${p.message}`);
      expect(errors).toEqual([]);
      expect(report.totals.errors).toBe(0);
    } finally {
      dir.remove();
    }
  });
});
