import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import { startAppOnSqlite, startAppOnPostgres, type RunningApp } from '../helpers/app.js';
import { requirePostgres } from '../helpers/postgres.js';

/**
 * An id that no delivery can have is simply not found (CONTRACT 3), on every
 * store (issue 16, item 5): PostgreSQL answered 500 for `%00`, which its
 * text type cannot hold, where SQLite answered 404.
 */

const onPostgres = await requirePostgres('the impossible-id tests on PostgreSQL');

const BACKENDS: Array<{ name: string; run: boolean; start: () => Promise<RunningApp<InboxDatabase>> }> = [
  { name: 'SQLite', run: true, start: () => startAppOnSqlite({ durability: 'relaxed' }) },
  { name: 'PostgreSQL', run: onPostgres, start: () => startAppOnPostgres() },
];

/** Path segments that name no delivery: NUL, bad UTF-8, a lone surrogate, the largest id the router takes. */
const IMPOSSIBLE = {
  'NUL alone': '%00',
  'NUL inside': '0190a1b2-c3d4-7e5f-8a9b-%00cdef01234567',
  'NUL at the end of a stored id': '{stored}%00',
  'invalid UTF-8': '%C3%28',
  'a lone byte 0xFF': '%FF',
  'an encoded lone surrogate': '%ED%A0%80',
  'a character beyond the BMP': '%F0%9F%98%80',
  'a bad percent-escape': '%zz',
  'control characters': '%01%1F%7F',
  '1,000 characters': 'x'.repeat(1000),
};

for (const backend of BACKENDS) {
  describe.runIf(backend.run)(`ids that cannot exist, on ${backend.name}`, () => {
    let server: RunningApp<InboxDatabase>;
    let stored: string;
    beforeAll(async () => {
      server = await backend.start();
      const res = await fetch(`${server.url}/api/webhook/ids`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"kept":true}',
      });
      stored = ((await res.json()) as { id: string }).id;
    });
    afterAll(async () => {
      await server.close();
    });

    for (const [name, segment] of Object.entries(IMPOSSIBLE)) {
      it(`answers 404 not_found for ${name}: GET, GET …/raw and DELETE`, async () => {
        const id = segment.replace('{stored}', stored);
        for (const [method, path] of [
          ['GET', `/api/deliveries/${id}`],
          ['GET', `/api/deliveries/${id}/raw`],
          ['DELETE', `/api/deliveries/${id}`],
        ] as const) {
          const res = await fetch(`${server.url}${path}`, { method, headers: server.auth });
          expect(res.status, `${method} ${path}`).toBe(404);
          expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
          expect(await res.json()).toMatchObject({ status: 404, code: 'not_found' });
        }
        // The delivery that is there is left alone.
        expect((await fetch(`${server.url}/api/deliveries/${stored}`, { headers: server.auth })).status).toBe(200);
      });
    }
  });
}
