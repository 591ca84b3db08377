import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import {
  expectExchangeProblem,
  inboxTotal,
  readDelivery,
  readJson,
  send,
  type Receipt,
  type SourceView,
} from '../helpers/exchange.js';

/** CONTRACT 1, "Source": which path segments name an inbox. */
describe('receive: source names', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp();
  });
  afterAll(async () => {
    await server.close();
  });

  function postTo(segment: string, method = 'POST') {
    return send(server, {
      method,
      path: `/api/webhook/${segment}`,
      headers: { 'content-type': 'application/json' },
      ...(method === 'POST' ? { body: '{"a":1}' } : {}),
    });
  }

  async function accepted(segment: string, expected: string): Promise<void> {
    const answer = await postTo(segment);
    expect(answer.status, answer.text).toBe(200);
    const receipt = JSON.parse(answer.text) as Receipt;
    expect(receipt.source).toBe(expected);
    expect((await readDelivery(server, receipt.id)).source).toBe(expected);
  }

  it.each([
    ['an encoded slash %2F', 'a%2Fb'],
    ['an encoded slash %2f alone', '%2f'],
    ['"."', '.'],
    ['".."', '..'],
    ['an encoded "."', '%2E'],
    ['an encoded ".."', '%2E%2E'],
    ['129 characters', 'x'.repeat(129)],
    ['129 emoji', encodeURIComponent('😀'.repeat(129))],
    ['NUL %00', 'a%00b'],
    ['unit separator %1F', '%1F'],
    ['DEL %7F', 'a%7F'],
    ['a C1 control %C2%85', 'a%C2%85'],
    ['invalid UTF-8 %FF', 'a%FF'],
    ['a lone continuation byte %80', '%80'],
    ['a truncated sequence %E2%82', '%E2%82'],
    ['an encoded surrogate %ED%A0%80', '%ED%A0%80'],
    ['a bad escape %zz', '%zz'],
    ['an empty name', ''],
  ])('refuses %s with 400 invalid_source', async (_name, segment) => {
    const before = await inboxTotal(server);
    expectExchangeProblem(await postTo(segment), 'invalid_source');
    expect(await inboxTotal(server)).toBe(before);
  });

  it('refuses an invalid source name on other methods too, before anything else', async () => {
    expectExchangeProblem(await postTo('%FF', 'GET'), 'invalid_source');
  });

  it('accepts 128 ASCII characters', async () => {
    const name = 'y'.repeat(128);
    await accepted(name, name);
  });

  it('accepts 128 emoji (256 UTF-16 code units, 512 bytes) and counts Unicode characters', async () => {
    const name = '😀'.repeat(128);
    await accepted(encodeURIComponent(name), name);
  });

  it('accepts 128 mixed Unicode characters', async () => {
    const name = 'é漢🎉'.repeat(42) + 'ab';
    expect(Array.from(name)).toHaveLength(128);
    await accepted(encodeURIComponent(name), name);
  });

  it('decodes percent-escapes and keeps names case-sensitive', async () => {
    await accepted('My%20Source', 'My Source');
    await accepted('my%20source', 'my source');
    await accepted('a.b~c_d-e', 'a.b~c_d-e');
    await accepted('...', '...');
    const { items } = await readJson<{ items: SourceView[] }>(server, '/api/sources');
    const names = items.map((s) => s.source);
    expect(names).toContain('My Source');
    expect(names).toContain('my source');
  });

  it('accepts a name with characters that are not ASCII, unencoded, as UTF-8 on the wire', async () => {
    await accepted(encodeURIComponent('Zürich'), 'Zürich');
  });

  it('takes a query string as the query, not as part of the name', async () => {
    const answer = await send(server, {
      path: '/api/webhook/with-query?x=1',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(answer.status).toBe(200);
    const receipt = JSON.parse(answer.text) as Receipt;
    expect(receipt.source).toBe('with-query');
    expect((await readDelivery(server, receipt.id)).query).toBe('x=1');
  });
});
