import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { startApp, type RunningApp } from '../helpers/app.js';
import { expectExchangeProblem, expectFetchProblem, inboxTotal, post, send, sendRaw } from '../helpers/exchange.js';

/** CONTRACT 1, the error table: each bad input gets its problem and stores nothing. */
describe('receive: refused requests', () => {
  let server: RunningApp;
  let before: number;
  beforeAll(async () => {
    server = await startApp();
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(async () => {
    before = await inboxTotal(server);
  });
  afterEach(async () => {
    // Every test here sends only refused requests: the inbox must not grow.
    expect(await inboxTotal(server)).toBe(before);
  });

  describe('empty_body', () => {
    it('refuses a POST with no body at all (no Content-Length, no Transfer-Encoding), with a JSON type', async () => {
      const answer = await sendRaw(
        server,
        'POST /api/webhook/empty HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n',
      );
      expectExchangeProblem(answer, 'empty_body');
    });

    it('refuses a POST with no body at all and no Content-Type', async () => {
      const answer = await sendRaw(server, 'POST /api/webhook/empty HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      expectExchangeProblem(answer, 'empty_body');
    });

    it('refuses Content-Length: 0 with a JSON type', async () => {
      await expectFetchProblem(await post(server, 'empty', ''), 'empty_body');
    });

    it('refuses Content-Length: 0 with a form type', async () => {
      await expectFetchProblem(await post(server, 'empty', '', 'application/x-www-form-urlencoded'), 'empty_body');
    });

    it('refuses Content-Length: 0 without a Content-Type', async () => {
      const answer = await send(server, { path: '/api/webhook/empty', headers: { 'content-length': '0' } });
      expectExchangeProblem(answer, 'empty_body');
    });

    it('answers empty_body, not 415, for an empty body that names a Content-Encoding', async () => {
      const answer = await send(server, {
        path: '/api/webhook/empty',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': 0 },
      });
      expectExchangeProblem(answer, 'empty_body');
    });

    it('refuses an empty chunked body', async () => {
      const answer = await sendRaw(
        server,
        'POST /api/webhook/empty HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
          'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n',
      );
      expectExchangeProblem(answer, 'empty_body');
    });
  });

  describe('invalid_json', () => {
    it.each([
      ['truncated', '{"a":'],
      ['a bare word', 'hello'],
      ['a trailing comma', '{"a":1,}'],
      ['single quotes', "{'a':1}"],
      ['two values', '{"a":1}{"b":2}'],
      ['only whitespace', '   \n\t '],
    ])('refuses JSON that does not parse: %s', async (_name, body) => {
      await expectFetchProblem(await post(server, 'bad-json', body), 'invalid_json');
    });

    it('refuses raw 0xff bytes inside a JSON string (not UTF-8)', async () => {
      const body = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
      await expectFetchProblem(await post(server, 'bad-json', body), 'invalid_json');
    });

    it('refuses a Latin-1 body even when the Content-Type says charset=iso-8859-1 (JSON is UTF-8)', async () => {
      const body = Buffer.from('{"name":"caf\u00e9"}', 'latin1');
      await expectFetchProblem(await post(server, 'bad-json', body, 'application/json; charset=iso-8859-1'), 'invalid_json');
    });

    it('refuses an overlong UTF-8 encoding of "/"', async () => {
      const body = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]);
      await expectFetchProblem(await post(server, 'bad-json', body), 'invalid_json');
    });

    it('refuses a body that is not UTF-8 even under a +json type with a charset', async () => {
      const body = Buffer.from([0x7b, 0xff, 0x7d]);
      await expectFetchProblem(await post(server, 'bad-json', body, 'application/vnd.foo+json; charset=utf-8'), 'invalid_json');
    });
  });

  describe('json_not_object', () => {
    it.each([
      ['an array', '[1,2,3]'],
      ['an empty array', '[]'],
      ['a string', '"hello"'],
      ['a number', '42'],
      ['null', 'null'],
      ['true', 'true'],
    ])('refuses a top level that is %s with 422', async (_name, body) => {
      await expectFetchProblem(await post(server, 'not-object', body), 'json_not_object');
    });
  });

  describe('invalid_form', () => {
    it.each([
      ['a bad % escape', 'a=%zz'],
      ['a lone %', 'a=%'],
      ['a truncated escape', 'a=1&b=%4'],
      ['a bad escape in a key', '%g1=1'],
      ['%FF (invalid UTF-8)', 'a=%FF'],
      ['a truncated multi-byte escape', 'a=%E2%82'],
    ])('refuses form data with %s', async (_name, body) => {
      await expectFetchProblem(await post(server, 'bad-form', body, 'application/x-www-form-urlencoded'), 'invalid_form');
    });

    it('refuses form data whose raw bytes are not UTF-8', async () => {
      const body = Buffer.concat([Buffer.from('a='), Buffer.from([0xff])]);
      await expectFetchProblem(await post(server, 'bad-form', body, 'application/x-www-form-urlencoded'), 'invalid_form');
    });
  });

  describe('unsupported_media_type', () => {
    it('refuses a body without a Content-Type', async () => {
      const answer = await send(server, { path: '/api/webhook/media', body: '{"a":1}' });
      expect(answer.headers['content-type']).toBeDefined();
      expectExchangeProblem(answer, 'unsupported_media_type');
    });

    it('refuses a chunked body without a Content-Type', async () => {
      const answer = await sendRaw(
        server,
        'POST /api/webhook/media HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
          'Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n7\r\n{"a":1}\r\n0\r\n\r\n',
      );
      expectExchangeProblem(answer, 'unsupported_media_type');
    });

    it.each([
      'text/plain',
      'text/plain; charset=utf-8',
      'text/json',
      'application/xml',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'application/+json',
      'application/octet-stream',
    ])('refuses %s', async (contentType) => {
      await expectFetchProblem(await post(server, 'media', '{"a":1}', contentType), 'unsupported_media_type');
    });

    it('refuses Content-Type on two header lines that disagree, before reading the body', async () => {
      const answer = await sendRaw(
        server,
        'POST /api/webhook/media HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
          'Content-Length: 7\r\ncontent-type: application/x-www-form-urlencoded\r\nConnection: close\r\n\r\n{"a":1}',
      );
      expectExchangeProblem(answer, 'unsupported_media_type');
      expect((JSON.parse(answer.body.toString()) as { detail: string }).detail).toBe(
        'The request has several Content-Type headers that disagree; send one.',
      );
    });

    it.each(['gzip', 'br', 'deflate, gzip', 'x-unknown'])(
      'refuses a JSON body with Content-Encoding %j, naming the coding',
      async (coding) => {
        const body = coding === 'gzip' ? gzipSync('{"a":1}') : Buffer.from('{"a":1}');
        const answer = await send(server, {
          path: '/api/webhook/media',
          headers: { 'content-type': 'application/json', 'content-encoding': coding, 'content-length': body.length },
          body,
        });
        expectExchangeProblem(answer, 'unsupported_media_type');
        expect((JSON.parse(answer.body.toString()) as { detail: string }).detail).toContain(`"${coding}"`);
      },
    );
  });

  describe('method_not_allowed', () => {
    it.each(['GET', 'PUT', 'DELETE', 'PATCH'])('answers %s with 405 and Allow: POST', async (method) => {
      const res = await fetch(`${server.url}/api/webhook/methods`, {
        method,
        ...(method === 'GET' ? {} : { headers: { 'content-type': 'application/json' }, body: '{"a":1}' }),
      });
      expect(res.headers.get('allow')).toBe('POST');
      await expectFetchProblem(res, 'method_not_allowed');
    });

    it('answers HEAD with 405 and Allow: POST', async () => {
      const answer = await send(server, { method: 'HEAD', path: '/api/webhook/methods' });
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe('POST');
    });
  });

  describe('not_found', () => {
    it.each([
      ['GET', '/nope'],
      ['POST', '/api/webhooks/github'],
      ['POST', '/api/webhook/a/b'],
      ['GET', '/api/deliveries/x/y/z'],
    ])('answers %s %s with a not_found problem', async (method, path) => {
      const answer = await send(server, {
        method,
        path,
        headers: { 'content-type': 'application/json', ...server.auth },
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      expectExchangeProblem(answer, 'not_found');
    });
  });
});
