import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import {
  deliver,
  essence,
  post,
  readDelivery,
  RFC3339_UTC_MS,
  send,
  sendRaw,
  type DeliveryView,
  type Receipt,
} from '../helpers/exchange.js';

/** CONTRACT 2: a delivery keeps exactly what arrived. */
describe('receive: what a delivery keeps', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp();
  });
  afterAll(async () => {
    await server.close();
  });

  async function raw(id: string): Promise<Response> {
    return fetch(`${server.url}/api/deliveries/${id}/raw`, { headers: server.auth });
  }

  describe('the success answer', () => {
    it('is exactly {id, source, receivedAt} as application/json, sent after the commit', async () => {
      const res = await post(server, 'answer', '{"a":1}');
      expect(res.status).toBe(200);
      expect(essence(res.headers.get('content-type'))).toBe('application/json');
      const receipt = (await res.json()) as Record<string, unknown>;
      expect(Object.keys(receipt).sort()).toEqual(['id', 'receivedAt', 'source']);
      expect(receipt.source).toBe('answer');
      expect(receipt.receivedAt).toMatch(RFC3339_UTC_MS);
      // Committed: the read API has it the moment the answer is in.
      const delivery = await readDelivery(server, String(receipt.id));
      expect(delivery.id).toBe(receipt.id);
      expect(delivery.receivedAt).toBe(receipt.receivedAt);
    });
  });

  describe('raw bytes', () => {
    it.each([
      ['odd whitespace', '\r\n\t {  "a" :\t1 ,\n\n  "b"  :  [ 1 ,2 ]\r\n}  \n\n'],
      ['unicode, escaped and not', '{"name":"Zoë 漢字 😀","escaped":"\\u00e9\\ud83d\\ude00","nul":"\\u0000"}'],
      ['duplicate keys', '{"a":1,"a":2}'],
      ['number forms', '{"n":1.0,"e":1E+2,"neg":-0,"big":123456789012345678901234567890}'],
    ])('reads back %s byte for byte', async (_name, body) => {
      const { id } = await deliver(server, 'fidelity', body);
      const res = await raw(id);
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(body))).toBe(true);
      expect((await readDelivery(server, id)).size).toBe(Buffer.byteLength(body));
    });

    it('parses duplicate keys as the last one wins, while raw keeps both', async () => {
      const { id } = await deliver(server, 'fidelity', '{"a":1,"a":2}');
      expect((await readDelivery(server, id)).body).toEqual({ a: 2 });
      expect(await (await raw(id)).text()).toBe('{"a":1,"a":2}');
    });

    it('keeps a UTF-8 byte order mark in the raw bytes', async () => {
      const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]);
      const { id } = await deliver(server, 'fidelity', body);
      expect(Buffer.from(await (await raw(id)).arrayBuffer()).equals(body)).toBe(true);
    });

    it.each([
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/vnd.foo+json',
      'application/x-www-form-urlencoded; charset=UTF-8',
    ])('serves raw with the original Content-Type %j and nosniff', async (contentType) => {
      const body = contentType.includes('form') ? 'a=1&b=%20' : '{"a":1}';
      const { id } = await deliver(server, 'fidelity', body, contentType);
      const res = await raw(id);
      expect(res.headers.get('content-type')).toBe(contentType);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await res.text()).toBe(body);
    });
  });

  describe('headers', () => {
    async function postWithHeaders(headers: Record<string, string>, path = '/api/webhook/headers'): Promise<DeliveryView> {
      const answer = await send(server, { path, headers: { 'Content-Type': 'application/json', ...headers }, body: '{}' });
      expect(answer.status, answer.text).toBe(200);
      return readDelivery(server, (JSON.parse(answer.text) as Receipt).id);
    }

    function custom(delivery: DeliveryView): Array<[string, string]> {
      return delivery.headers.filter(([name]) => name.toLowerCase().startsWith('x-'));
    }

    it('keeps headers as an ordered list of [name, value] in the order sent', async () => {
      const sent: Array<[string, string]> = [
        ['X-Zeta', 'z'],
        ['x-alpha', 'a'],
        ['X-Mid-Header', 'm m'],
        ['X-Beta', 'b'],
      ];
      const forward = await postWithHeaders(Object.fromEntries(sent));
      expect(custom(forward)).toEqual(sent);
      const reversed = [...sent].reverse();
      const backward = await postWithHeaders(Object.fromEntries(reversed));
      expect(custom(backward)).toEqual(reversed);
      for (const delivery of [forward, backward]) {
        for (const pair of delivery.headers) {
          expect(pair).toHaveLength(2);
          expect(typeof pair[0]).toBe('string');
          expect(typeof pair[1]).toBe('string');
        }
        expect(delivery.headers.map(([n]) => n.toLowerCase())).toContain('content-type');
        expect(delivery.headers.map(([n]) => n.toLowerCase())).toContain('host');
      }
    });

    it('keeps a repeated header as separate pairs, in order', async () => {
      const answer = await sendRawHeaders(['X-Repeat', 'one', 'X-Other', 'o', 'X-Repeat', 'two']);
      expect(custom(answer)).toEqual([
        ['X-Repeat', 'one'],
        ['X-Other', 'o'],
        ['X-Repeat', 'two'],
      ]);
    });

    it('redacts authorization, cookie and proxy-authorization values, whatever their case', async () => {
      const secrets = {
        authorization: 'Bearer s3cret-auth',
        cookie: 'session=s3cret-cookie',
        'proxy-authorization': 'Basic s3cret-proxy',
      };
      const delivery = await postWithHeaders({
        Authorization: secrets.authorization,
        COOKIE: secrets.cookie,
        'Proxy-Authorization': secrets['proxy-authorization'],
        'X-Kept': 'visible',
      });
      const byName = new Map(delivery.headers.map(([name, value]) => [name.toLowerCase(), value]));
      for (const [name, secret] of Object.entries(secrets)) {
        expect(byName.has(name)).toBe(true);
        expect(byName.get(name)).not.toContain('s3cret');
        expect(byName.get(name)).not.toBe(secret);
      }
      expect(byName.get('x-kept')).toBe('visible');
      const everything = JSON.stringify(await readDelivery(server, delivery.id));
      expect(everything).not.toContain('s3cret');
    });

    it('keeps every header, past the 1,000 that Node keeps by default, and reads a Content-Type sent after them', async () => {
      // Node dropped headers past its default count silently: this Content-Type came after 1,500 others (415 then).
      const many = Array.from({ length: 1500 }, (_, i) => `x:${i}`);
      const answer = await sendRaw(
        server,
        [
          'POST /api/webhook/headers HTTP/1.1',
          'Host: 127.0.0.1',
          'Content-Length: 2',
          'Connection: close',
          ...many,
          'Content-Type: application/json',
          'X-Last: yes',
          '',
          '{}',
        ].join('\r\n'),
      );
      expect(answer.status, answer.text).toBe(200);
      const delivery = await readDelivery(server, (JSON.parse(answer.text) as Receipt).id);
      expect(delivery.headers.filter(([name]) => name === 'x').map(([, value]) => value)).toEqual(
        many.map((line) => line.slice(2)),
      );
      expect(delivery.headers.slice(-2)).toEqual([
        ['Content-Type', 'application/json'],
        ['X-Last', 'yes'],
      ]);
    });

    async function sendRawHeaders(flat: string[]): Promise<DeliveryView> {
      const lines: string[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) lines.push(`${flat[i] ?? ''}: ${flat[i + 1] ?? ''}`);
      const answer = await sendRaw(
        server,
        [
          'POST /api/webhook/headers HTTP/1.1',
          'Host: 127.0.0.1',
          'Content-Type: application/json',
          'Content-Length: 2',
          'Connection: close',
          ...lines,
          '',
          '{}',
        ].join('\r\n'),
      );
      expect(answer.status, answer.text).toBe(200);
      return readDelivery(server, (JSON.parse(answer.text) as Receipt).id);
    }
  });

  describe('request facts', () => {
    it('keeps the query string exactly, the method, the peer address, size and content type', async () => {
      const query = 'a=1&b=%20x&a=2&empty=&flag&u=%C3%A9';
      const body = '{"size":"ünïcode"}';
      const answer = await send(server, {
        path: `/api/webhook/facts?${query}`,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body,
      });
      expect(answer.status).toBe(200);
      const delivery = await readDelivery(server, (JSON.parse(answer.text) as Receipt).id);
      expect(delivery.query).toBe(query);
      expect(delivery.method).toBe('POST');
      expect(delivery.remoteAddress).toBe('127.0.0.1');
      expect(delivery.size).toBe(Buffer.byteLength(body));
      expect(delivery.size).not.toBe(body.length);
      expect(delivery.contentType).toBe('application/json; charset=utf-8');
      expect(delivery.source).toBe('facts');
      expect(delivery.verification).toEqual({ status: 'none' });
    });

    it('keeps an empty query as ""', async () => {
      const { id } = await deliver(server, 'facts', '{}');
      expect((await readDelivery(server, id)).query).toBe('');
    });

    it('stamps receivedAt as RFC 3339 UTC with milliseconds, at the time of receipt', async () => {
      const before = Date.now();
      const { id, receivedAt } = await deliver(server, 'facts', '{}');
      const after = Date.now();
      expect(receivedAt).toMatch(RFC3339_UTC_MS);
      const at = Date.parse(receivedAt);
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(after);
      expect((await readDelivery(server, id)).receivedAt).toBe(receivedAt);
    });

    it('gives unique URL-safe ids and increasing integer seqs', async () => {
      const ids: string[] = [];
      const seqs: number[] = [];
      for (let i = 0; i < 10; i++) {
        const { id } = await deliver(server, 'facts', `{"i":${i}}`);
        expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(encodeURIComponent(id)).toBe(id);
        ids.push(id);
        const delivery = await readDelivery(server, id);
        expect(Number.isSafeInteger(delivery.seq)).toBe(true);
        seqs.push(delivery.seq);
      }
      expect(new Set(ids).size).toBe(ids.length);
      for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] ?? Infinity);
    });

    it('never reuses a seq, not even after the newest delivery is deleted', async () => {
      const { id } = await deliver(server, 'facts', '{"doomed":true}');
      const doomed = await readDelivery(server, id);
      const res = await fetch(`${server.url}/api/deliveries/${id}`, { method: 'DELETE', headers: server.auth });
      expect(res.status).toBe(204);
      const next = await readDelivery(server, (await deliver(server, 'facts', '{}')).id);
      expect(next.seq).toBeGreaterThan(doomed.seq);
    });
  });

  describe('hostile keys', () => {
    it('stores __proto__ and constructor in JSON as data and reads them back exactly', async () => {
      const body =
        '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"toString":"x","hasOwnProperty":1}';
      const { id } = await deliver(server, 'hostile', body);
      expect(await (await raw(id)).text()).toBe(body);
      const res = await fetch(`${server.url}/api/deliveries/${id}`, { headers: server.auth });
      const text = await res.text();
      expect(text).toContain(
        '"body":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"toString":"x","hasOwnProperty":1}',
      );
      const parsed = (JSON.parse(text) as { body: object }).body;
      expect(Object.keys(parsed)).toEqual(['__proto__', 'constructor', 'toString', 'hasOwnProperty']);
      expect(Object.getOwnPropertyDescriptor(parsed, '__proto__')?.value).toEqual({ polluted: 'yes' });
      await expectServerUnpolluted();
    });

    it('stores __proto__ and constructor in form data as data and reads them back exactly', async () => {
      const body = '__proto__=a&constructor=c&__proto__=b&__proto__[polluted]=yes&constructor[prototype][polluted]=yes';
      const { id } = await deliver(server, 'hostile', body, 'application/x-www-form-urlencoded');
      expect(await (await raw(id)).text()).toBe(body);
      const text = await (await fetch(`${server.url}/api/deliveries/${id}`, { headers: server.auth })).text();
      expect(text).toContain(
        '"body":{"__proto__":["a","b"],"constructor":"c","__proto__[polluted]":"yes","constructor[prototype][polluted]":"yes"}',
      );
      await expectServerUnpolluted();
    });

    it('keeps a lone __proto__ form key as a string', async () => {
      const { id } = await deliver(server, 'hostile', '__proto__=only', 'application/x-www-form-urlencoded');
      const text = await (await fetch(`${server.url}/api/deliveries/${id}`, { headers: server.auth })).text();
      expect(text).toContain('"body":{"__proto__":"only"}');
    });

    /** Objects the server builds after the hostile deliveries show no inherited `polluted`. */
    async function expectServerUnpolluted(): Promise<void> {
      const { id } = await deliver(server, 'after-hostile', '{}');
      const text = await (await fetch(`${server.url}/api/deliveries/${id}`, { headers: server.auth })).text();
      expect(text).toContain('"body":{}');
      expect(text).not.toContain('polluted');
      const form = await deliver(server, 'after-hostile', 'k=v', 'application/x-www-form-urlencoded');
      const formText = await (await fetch(`${server.url}/api/deliveries/${form.id}`, { headers: server.auth })).text();
      expect(formText).toContain('"body":{"k":"v"}');
      const sources = await (await fetch(`${server.url}/api/sources`, { headers: server.auth })).text();
      expect(sources).not.toContain('polluted');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });
});
