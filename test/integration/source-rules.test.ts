import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/platform/observe/logger.js';
import type { RunningApp } from '../helpers/app.js';
import { accepted, countOf, metricsText, refused, startWithConfig } from '../helpers/configured-app.js';
import { expectExchangeProblem, readDelivery, send, sendRaw } from '../helpers/exchange.js';
import { JSON_TYPE, githubRequest } from '../helpers/provider-signatures.js';

/**
 * The per-source rules of the config file over real HTTP (CONTRACT 4):
 * strict mode, maxBodyBytes, anyJson, rateLimit; and what a verification
 * failure leaves in the metrics and the logs.
 */

const SIGNED_SECRET = 'source-rules-secret-4f1d';
const RATE = { requests: 3, perSeconds: 1 };

let server: RunningApp;
let strictServer: RunningApp;
const logLines: string[] = [];

beforeAll(async () => {
  server = await startWithConfig(
    {
      sources: {
        small: { maxBodyBytes: 1024 },
        any: { anyJson: true },
        limited: { rateLimit: RATE },
        signed: { verify: { scheme: 'github', secrets: [SIGNED_SECRET] } },
      },
    },
    {
      logger: createLogger('info', {
        write: (line: string) => {
          logLines.push(line);
        },
      }),
    },
  );
  strictServer = await startWithConfig({
    strict: true,
    sources: { known: {}, 'also-known': { anyJson: true } },
  });
});

afterAll(async () => {
  await server.close();
  await strictServer.close();
});

const json = (body: string) => ({ body, headers: { 'content-type': JSON_TYPE } });

describe('strict mode', () => {
  it('answers 404 unknown_source for a source the file does not name, whatever the method', async () => {
    for (const method of ['POST', 'GET', 'PUT']) {
      const answer = await refused(
        strictServer,
        'stranger',
        { method, ...(method === 'GET' ? {} : json('{"a":1}')) },
        'unknown_source',
      );
      expect(answer.status).toBe(404);
    }
    const { items } = (await (await fetch(`${strictServer.url}/api/sources`, { headers: strictServer.auth })).json()) as {
      items: unknown[];
    };
    expect(items).toEqual([]);
  });

  it('accepts the named sources, with their rules', async () => {
    await accepted(strictServer, 'known', json('{"a":1}'));
    await accepted(strictServer, 'also-known', json('[1,2]'));
    expect(await countOf(strictServer, 'known')).toBe(1);
    expect(await countOf(strictServer, 'also-known')).toBe(1);
  });

  it('is off by default: an unnamed source works beside the named ones', async () => {
    await accepted(server, `anyone-${randomUUID()}`, json('{"a":1}'));
  });
});

describe('maxBodyBytes', () => {
  const bodyOf = (size: number) => JSON.stringify({ pad: 'x'.repeat(size - 10) });

  it("answers 413 over the source's limit, declared or chunked, and accepts at it", async () => {
    const over = bodyOf(1025);
    expect(Buffer.byteLength(over)).toBe(1025);
    expect((await refused(server, 'small', json(over), 'payload_too_large')).status).toBe(413);
    const chunked = await send(server, {
      path: '/api/webhook/small',
      headers: { 'content-type': JSON_TYPE, 'transfer-encoding': 'chunked' },
      body: over,
    });
    expect(chunked.status, chunked.text).toBe(413);
    expect(await countOf(server, 'small')).toBe(0);
    await accepted(server, 'small', json(bodyOf(1024)));
  });

  it('leaves other sources at the global limit (5 MiB)', async () => {
    await accepted(server, 'roomy', json(bodyOf(1024 * 1024)));
    // Declared over 5 MiB: refused from the headers alone, before any body byte.
    const head = `POST /api/webhook/roomy HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${5 * 1024 * 1024 + 1}\r\n\r\n`;
    expectExchangeProblem(await sendRaw(server, head), 'payload_too_large');
  });
});

describe('anyJson', () => {
  it('accepts arrays, strings, numbers, booleans and null, and stores them as sent', async () => {
    for (const value of [[1, 'two', { three: 3 }], 'a string', 42.5, true, null]) {
      const receipt = await accepted(server, 'any', json(JSON.stringify(value)));
      expect((await readDelivery(server, receipt.id)).body).toEqual(value);
    }
  });

  it('leaves other sources at objects only (422 json_not_object), and still refuses bad JSON', async () => {
    expect((await refused(server, 'objects-only', json('[1]'), 'json_not_object')).status).toBe(422);
    expect((await refused(server, 'any', json('[1,'), 'invalid_json')).status).toBe(400);
  });
});

describe('rateLimit', () => {
  it('answers 429 rate_limited with Retry-After past N requests, stores nothing then, and recovers after the window', async () => {
    for (let n = 0; n < RATE.requests; n += 1) await accepted(server, 'limited', json(`{"n":${n}}`));
    const limited = await refused(server, 'limited', json('{"n":"over"}'), 'rate_limited');
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= RATE.perSeconds).toBe(true);
    expect(await countOf(server, 'limited')).toBe(RATE.requests);
    // Another source is not limited meanwhile.
    await accepted(server, 'unlimited', json('{"free":true}'));

    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));
    await accepted(server, 'limited', json('{"n":"after the wait"}'));
    expect(await countOf(server, 'limited')).toBe(RATE.requests + 1);
  });
});

describe('verification failures in the metrics and the logs', () => {
  it('counts reception_verification_failures_total by source and reason', async () => {
    const request = await githubRequest('{"action":"opened"}', 'wrong-secret', randomUUID());
    await refused(server, 'signed', request, 'signature_invalid');
    await refused(server, 'signed', request, 'signature_invalid');
    await refused(server, 'signed', json('{"unsigned":true}'), 'signature_invalid');
    const text = await metricsText(server);
    expect(text).toContain('reception_verification_failures_total{source="signed",reason="signature_mismatch"} 2');
    expect(text).toContain('reception_verification_failures_total{source="signed",reason="missing_signature"} 1');
  });

  it('logs the outcome and the reason, never the secret or the signature', async () => {
    const delivery = randomUUID();
    const bad = await githubRequest('{"action":"closed"}', 'another-wrong-secret', delivery);
    await refused(server, 'signed', bad, 'signature_invalid');
    const good = await githubRequest('{"action":"reopened"}', SIGNED_SECRET, randomUUID());
    const receipt = await accepted(server, 'signed', good);

    const entries = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const webhookLines = entries.filter((entry) => entry.msg === 'webhook' && entry.source === 'signed');
    expect(webhookLines).toContainEqual(
      expect.objectContaining({
        status: 401,
        outcome: 'signature_invalid',
        verification: { status: 'failed', scheme: 'github', reason: 'signature_mismatch' },
      }),
    );
    expect(webhookLines).toContainEqual(
      expect.objectContaining({
        status: 200,
        id: receipt.id,
        verification: { status: 'verified', scheme: 'github' },
      }),
    );
    const all = logLines.join('');
    for (const secretish of [SIGNED_SECRET, 'another-wrong-secret', 'wrong-secret']) expect(all).not.toContain(secretish);
    for (const request of [bad, good]) {
      const signature = request.headers['x-hub-signature-256'] ?? '';
      expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(all).not.toContain(signature.slice('sha256='.length));
    }
  });
});
