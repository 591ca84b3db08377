import { join } from 'node:path';
import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { problemFor } from '../../../src/platform/errors/problem-catalogue.js';
import { installErrorHandling } from '../../../src/platform/http/error-handler.js';
import { Receiver } from '../../../src/receive/receiver.js';
import { TrustedProxies } from '../../../src/platform/http/remote-address.js';
import { SqliteStore } from '../../../src/inbox/sqlite-store.js';
import { WriteQueue } from '../../../src/inbox/write-queue.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** What a bug inside could put in an error message: none of it may reach the client. */
const INSIDE = 'at /srv/reception/dist/src/secret.js:12:34 token=rcp_abc';

function expectBareInternalError(status: number, text: string): void {
  expect(status).toBe(500);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(body).toEqual({ ...problemFor('internal_error', String(body.detail)) });
  expect(text).not.toContain('/srv/');
  expect(text).not.toContain('secret');
  expect(text).not.toContain('rcp_abc');
  expect(text).not.toMatch(/\n\s+at /);
}

/** CONTRACT 1: 500 internal_error carries no stack trace and no internal path. */
describe('internal errors', () => {
  it('on an API route: a problem with a fixed detail, nothing from the error', async () => {
    const app = Fastify({ logger: false });
    installErrorHandling(app);
    app.get('/api/broken', async () => {
      throw new Error(`broken ${INSIDE}`);
    });
    const res = await app.inject({ method: 'GET', url: '/api/broken' });
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expectBareInternalError(res.statusCode, res.body);
    await app.close();
  });

  // The claim route's 500 (issue 28): its reply serializer threw (RangeError:
  // Invalid string length), the error handler's problem went through that same
  // serializer and threw again, and Fastify's fallback sent its own body with
  // the internal message.
  it("when a route's reply serializer throws, or the handler throws after setting one: a problem all the same", async () => {
    const app = Fastify({ logger: false });
    installErrorHandling(app);
    const throwing = (answer: { items: unknown[] }): string => {
      if (answer.items.length > 0) throw new RangeError(`Invalid string length ${INSIDE}`);
      return '{"items":[]}';
    };
    app.post('/api/serializer-throws', async (_request, reply) =>
      reply
        .type('application/json; charset=utf-8')
        .serializer(throwing)
        .send({ items: [1] }),
    );
    app.get('/api/throws-after-serializer', async (_request, reply) => {
      reply.serializer(throwing);
      throw new Error(`store failed ${INSIDE}`);
    });
    for (const [method, url] of [
      ['POST', '/api/serializer-throws'],
      ['GET', '/api/throws-after-serializer'],
    ] as const) {
      const res = await app.inject({ method, url });
      expect(res.headers['content-type'], url).toMatch(/^application\/problem\+json/);
      expectBareInternalError(res.statusCode, res.body);
    }
    await app.close();
  });

  describe('on the webhook route', () => {
    let dir: ReturnType<typeof tempDir>;
    let store: SqliteStore;
    beforeEach(() => {
      dir = tempDir();
      store = new SqliteStore({ file: join(dir.path, 'reception.sqlite'), durability: 'relaxed' });
    });
    afterEach(async () => {
      await store.close();
      dir.remove();
    });

    it('a fault inside the receiver is a 500 problem with Retry-After; the error goes to the log only', async () => {
      const receiver = new Receiver({
        queue: new WriteQueue(store, { maxPending: 10, maxPendingBytes: 1 << 20, maxBatch: 10, maxBatchBytes: 1 << 20 }),
        trustedProxies: new TrustedProxies([]),
        redactHeaders: new Set(),
        rules: () => {
          throw new TypeError(`rules failed ${INSIDE}`);
        },
      });
      const answer = await receiver.handle({
        method: 'POST',
        sourceSegment: 'anything',
        query: '',
        headers: { 'content-type': 'application/json' },
        rawHeaders: ['Content-Type', 'application/json'],
        socketAddress: '127.0.0.1',
        readBody: async () => Buffer.from('{}'),
      });
      expect(answer.outcome).toBe('internal_error');
      expect(answer.headers['retry-after']).toBe('5');
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expectBareInternalError(answer.status, answer.body);
      expect(String(answer.error)).toContain('rules failed');
      expect(await store.list({ limit: 10 })).toEqual([]);
    });
  });
});
