import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SourceRules } from '../../src/receive/source-rules.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import { startAppOnSqlite, startAppOnPostgres, type RunningApp } from '../helpers/app.js';
import { requirePostgres } from '../helpers/postgres.js';
import { DEFAULT_POLICY, type Receipt } from '../helpers/configured-app.js';
import { stripeRequest } from '../helpers/provider-signatures.js';

/**
 * One delivery whose values a store finds hard to hold must not fail the
 * deliveries committed beside it (issue 16, item 3). PostgreSQL text cannot
 * hold NUL, and a Stripe event id is read from the signed JSON body, where
 * `\u0000` is valid: such an event failed its whole group commit, and sent
 * among 600 others it made hundreds of them fail with 503.
 */

const STRIPE_SECRET = 'whsec_one_bad_delivery';
const UNRELATED = 600;

const onPostgres = await requirePostgres('the one-bad-delivery tests on PostgreSQL');

const BACKENDS: Array<{ name: string; run: boolean; start: (rules: SourceRules) => Promise<RunningApp<InboxDatabase>> }> = [
  { name: 'SQLite', run: true, start: (rules) => startAppOnSqlite({ rules, durability: 'relaxed' }) },
  { name: 'PostgreSQL', run: onPostgres, start: (rules) => startAppOnPostgres({ rules }) },
];

for (const backend of BACKENDS) {
  describe.runIf(backend.run)(`one bad delivery among many, on ${backend.name}`, () => {
    let server: RunningApp<InboxDatabase>;
    beforeAll(async () => {
      server = await backend.start(
        SourceRules.fromConfig(
          {
            sources: { stripe: { verify: { scheme: 'stripe', secrets: [STRIPE_SECRET] } } },
          },
          DEFAULT_POLICY,
        ),
      );
    });
    afterAll(async () => {
      await server.close();
    });

    const postStripe = async (payload: string): Promise<{ status: number; text: string }> => {
      const request = stripeRequest(payload, STRIPE_SECRET);
      const res = await fetch(`${server.url}/api/webhook/stripe`, {
        method: 'POST',
        headers: request.headers,
        body: request.body,
      });
      return { status: res.status, text: await res.text() };
    };
    const postPlain = async (source: string, body: string): Promise<{ status: number; text: string }> => {
      const res = await fetch(`${server.url}/api/webhook/${source}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      return { status: res.status, text: await res.text() };
    };

    for (const round of [1, 2, 3]) {
      it(`stores a Stripe event whose id holds NUL, and every one of ${UNRELATED} deliveries sent with it (round ${round})`, async () => {
        const eventId = `evt_${randomUUID()}\u0000after the NUL`;
        const payload = JSON.stringify({ id: eventId, object: 'event', type: 'invoice.paid', round });
        const source = `unrelated-${round}`;
        const bodies = Array.from({ length: UNRELATED }, (_, i) => JSON.stringify({ i, round }));
        // The bad one in the middle of the burst, so that it shares its commit with others.
        const half = UNRELATED / 2;
        const [before, bad, after] = await Promise.all([
          Promise.all(bodies.slice(0, half).map((body) => postPlain(source, body))),
          postStripe(payload),
          Promise.all(bodies.slice(half).map((body) => postPlain(source, body))),
        ]);
        const unrelated = [...before, ...after];
        const statuses = new Map<number, number>();
        for (const answer of unrelated) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        expect(Object.fromEntries(statuses)).toEqual({ 200: UNRELATED });

        // Every unrelated delivery is there, with its own body.
        const ids = unrelated.map((answer) => (JSON.parse(answer.text) as Receipt).id);
        const stored = await Promise.all(ids.map((id) => server.store.get(id)));
        expect(stored.map((d) => d?.raw.toString())).toEqual(bodies.slice(0, half).concat(bodies.slice(half)));

        // The bad one: refused with a 4xx, or stored and read back exactly. This store keeps it.
        expect(bad.status, bad.text).toBe(200);
        const receipt = JSON.parse(bad.text) as Receipt;
        expect(receipt.duplicate).toBeUndefined();
        const raw = await fetch(`${server.url}/api/deliveries/${receipt.id}/raw`, { headers: server.auth });
        expect(raw.status).toBe(200);
        expect(Buffer.from(await raw.arrayBuffer()).equals(Buffer.from(payload))).toBe(true);
        expect((await server.store.get(receipt.id))?.dedupKey).toBe(eventId);

        // Its key was kept whole: Stripe's retry is a duplicate, an id that stops at the NUL is not.
        const retry = await postStripe(payload);
        expect(retry.status).toBe(200);
        expect(JSON.parse(retry.text)).toEqual({ ...receipt, duplicate: true });
        const cut = await postStripe(JSON.stringify({ id: eventId.split('\u0000')[0], object: 'event' }));
        expect(cut.status).toBe(200);
        expect((JSON.parse(cut.text) as Receipt).duplicate).toBeUndefined();
      }, 60_000);
    }

    it('stores what else a sender controls in text columns exactly: the query and the header values as sent', async () => {
      const answer = await fetch(`${server.url}/api/webhook/odd?a=%00&b=%5C0&c=%ED%A0%80`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-odd': '\\0 \\u0000 ÿ' },
        body: '{"odd":"\\u0000"}',
      });
      expect(answer.status).toBe(200);
      const stored = await server.store.get(((await answer.json()) as Receipt).id);
      expect(stored?.query).toBe('a=%00&b=%5C0&c=%ED%A0%80');
      expect(stored?.headers).toContainEqual(['x-odd', '\\0 \\u0000 ÿ']);
      expect(stored?.raw.toString()).toBe('{"odd":"\\u0000"}');
    });

    it('never lets a NUL reach the query, a header value or the source name: they are refused with 400', async () => {
      const { port } = new URL(server.url);
      const rawStatus = (head: string): Promise<number> =>
        new Promise((resolve, reject) => {
          const socket = connect(Number(port), '127.0.0.1', () => socket.end(head));
          let text = '';
          socket.on('data', (chunk: Buffer) => {
            text += chunk.toString('latin1');
          });
          socket.on('error', reject);
          socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
        });
      const request = (target: string, header = ''): string =>
        `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Content-Type: application/json\r\n${header}Content-Length: 2\r\nConnection: close\r\n\r\n{}`;
      expect(await rawStatus(request('/api/webhook/odd?a=\u0000'))).toBe(400);
      expect(await rawStatus(request('/api/webhook/odd', 'X-Odd: a\u0000b\r\n'))).toBe(400);
      expect(await rawStatus(request('/api/webhook/odd', 'X-Forwarded-For: 203.0.113.7\u0000\r\n'))).toBe(400);
      const named = await fetch(`${server.url}/api/webhook/a%00b`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(named.status).toBe(400);
      expect(await named.json()).toMatchObject({ code: 'invalid_source' });
    });
  });
}
