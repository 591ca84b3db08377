import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { deliver, readDelivery, send } from '../helpers/exchange.js';

const FORM = 'application/x-www-form-urlencoded';

/** CONTRACT 1, the body table: which Content-Types are taken and how the body is parsed. */
describe('receive: media types and parsing', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp();
  });
  afterAll(async () => {
    await server.close();
  });

  describe('JSON', () => {
    it.each([
      'application/json',
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'APPLICATION/JSON',
      'Application/Json; Charset="utf-8"',
      ' application/json ',
      'application/vnd.foo+json',
      'application/vnd.github.v3+json; charset=utf-8',
      'APPLICATION/CLOUDEVENTS+JSON',
      'application/merge-patch+json',
      'application/json; charset=iso-8859-1',
      'application/json; charset=utf-16',
    ])('accepts %j and parses the object', async (contentType) => {
      const { id } = await deliver(server, 'json-types', '{"kind":"json","n":1}', contentType);
      const delivery = await readDelivery(server, id);
      expect(delivery.body).toEqual({ kind: 'json', n: 1 });
      // HTTP strips optional whitespace around a header value on the wire.
      expect(delivery.contentType).toBe(contentType.trim());
    });

    it('reads the body as UTF-8 whatever charset the Content-Type names', async () => {
      const { id } = await deliver(
        server,
        'json-types',
        Buffer.from('{"name":"caf\u00e9 \u2603"}', 'utf8'),
        'application/json; charset=iso-8859-1',
      );
      expect((await readDelivery(server, id)).body).toEqual({ name: 'caf\u00e9 \u2603' });
    });

    it('accepts a UTF-8 byte order mark before the object', async () => {
      const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"bom":true}')]);
      const { id } = await deliver(server, 'json-types', body);
      expect((await readDelivery(server, id)).body).toEqual({ bom: true });
    });

    it('keeps numbers, nulls, nested arrays and escapes as JSON values', async () => {
      const value = {
        int: -12,
        float: 1.5e-3,
        big: 9007199254740991,
        nil: null,
        yes: true,
        list: [1, [2, [3]], { x: 'y' }],
        esc: 'tab\t"quote"\\ \u0000 \u2028',
      };
      const { id } = await deliver(server, 'json-types', JSON.stringify(value));
      expect((await readDelivery(server, id)).body).toEqual(value);
    });

    it('accepts Content-Encoding: identity, which is no coding at all', async () => {
      const res = await fetch(`${server.url}/api/webhook/json-types`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'Identity' },
        body: '{"plain":true}',
      });
      expect(res.status).toBe(200);
      const { id } = (await res.json()) as { id: string };
      expect((await readDelivery(server, id)).body).toEqual({ plain: true });
    });

    it('accepts the same Content-Type repeated on two header lines', async () => {
      const answer = await send(server, {
        path: '/api/webhook/json-types',
        headers: { 'content-type': ['application/json', 'application/json'] },
        body: '{"twice":true}',
      });
      expect(answer.status).toBe(200);
      const { id } = JSON.parse(answer.text) as { id: string };
      const delivery = await readDelivery(server, id);
      expect(delivery.body).toEqual({ twice: true });
      expect(delivery.headers.filter(([name]) => name.toLowerCase() === 'content-type')).toHaveLength(2);
    });

    it('accepts an empty object', async () => {
      const { id } = await deliver(server, 'json-types', '{}');
      expect((await readDelivery(server, id)).body).toEqual({});
    });
  });

  describe('form data', () => {
    async function form(body: string | Buffer, contentType = FORM): Promise<unknown> {
      const { id } = await deliver(server, 'form-types', body, contentType);
      return (await readDelivery(server, id)).body;
    }

    it('parses pairs into an object of strings', async () => {
      expect(await form('a=1&b=two&c=')).toEqual({ a: '1', b: 'two', c: '' });
    });

    it('turns a repeated key into an array of its values in order', async () => {
      expect(await form('tag=x&one=1&tag=y&tag=z')).toEqual({ tag: ['x', 'y', 'z'], one: '1' });
    });

    it('takes keys literally: brackets and dots make no nesting', async () => {
      expect(await form('a[b]=1&a[c]=2&a[]=3&a[]=4&x.y=5')).toEqual({ 'a[b]': '1', 'a[c]': '2', 'a[]': ['3', '4'], 'x.y': '5' });
    });

    it('reads "+" as a space and "%2B" as a plus', async () => {
      expect(await form('greeting=hello+world&sum=1%2B1&key+name=v')).toEqual({
        greeting: 'hello world',
        sum: '1+1',
        'key name': 'v',
      });
    });

    it('decodes UTF-8 percent escapes and raw UTF-8', async () => {
      expect(await form('city=Z%C3%BCrich&emoji=%F0%9F%98%80&raw=é')).toEqual({ city: 'Zürich', emoji: '😀', raw: 'é' });
    });

    it('keeps "=" inside a value and treats a key without "=" as empty', async () => {
      expect(await form('eq=a=b=c&flag&&=lonely')).toEqual({ eq: 'a=b=c', flag: '', '': 'lonely' });
    });

    it.each(['application/x-www-form-urlencoded; charset=utf-8', 'APPLICATION/X-WWW-FORM-URLENCODED'])(
      'accepts %j',
      async (contentType) => {
        expect(await form('a=1', contentType)).toEqual({ a: '1' });
      },
    );

    it('keeps form fields as strings, never as numbers or booleans', async () => {
      const body = await form('n=1&t=true&nil=null');
      expect(body).toEqual({ n: '1', t: 'true', nil: 'null' });
    });
  });
});
