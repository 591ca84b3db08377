import Value from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryPageSchema, DeliverySchema } from '../../src/api/schemas.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { connectSse } from '../helpers/sse.js';
import { deliver } from '../helpers/exchange.js';

/**
 * A delivery's JSON as the API and the stream write it (`deliveryText`): a
 * JSON body goes in as the sender's own text, and the whole still has the
 * shape of the schemas that the OpenAPI document publishes.
 */
describe('deliveries as JSON text', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp({ durability: 'relaxed' });
  });
  afterAll(async () => {
    await server.close();
  });

  async function getText(id: string): Promise<string> {
    const res = await fetch(`${server.url}/api/deliveries/${id}`, { headers: server.auth });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    return await res.text();
  }

  const bodies: Array<[string, string, string]> = [
    // name, as sent, the body's text in the answer
    ['line breaks between tokens', '{\r\n  "a": [1,\n 2],\r"b" : "x\\ny"\n}\n', '{    "a": [1,  2], "b" : "x\\ny" } '],
    [
      'numbers as written',
      '{"n":1.0,"e":1E+2,"neg":-0,"big":123456789012345678901234567890}',
      '{"n":1.0,"e":1E+2,"neg":-0,"big":123456789012345678901234567890}',
    ],
    ['duplicate keys and __proto__', '{"a":1,"a":2,"__proto__":{"x":1}}', '{"a":1,"a":2,"__proto__":{"x":1}}'],
    ['unicode, U+2028 and escapes', '{"s":"Zoë \u2028 😀","t":"\\u0000\\u2029"}', '{"s":"Zoë \u2028 😀","t":"\\u0000\\u2029"}'],
    ['a byte order mark', '\ufeff{"a":1}', '{"a":1}'],
  ];

  it.each(bodies)("writes %s as the sender's text, which parses to the same value", async (_name, sent, shown) => {
    const { id } = await deliver(server, 'text', Buffer.from(sent, 'utf8'));
    const text = await getText(id);
    expect(text).toContain(`,"body":${shown},"verification":{"status":"none"},"forwards":[]}`);
    const delivery: unknown = JSON.parse(text);
    expect(Value.Check(DeliverySchema, delivery)).toBe(true);
    expect((delivery as { body: unknown }).body).toEqual(JSON.parse(sent.replace(/^\ufeff/, '')));
  });

  it("writes form data parsed, and lists pages in the schema's shape", async () => {
    const { id } = await deliver(server, 'text-form', 'a=1&a=2&b=%F0%9F%98%80', 'application/x-www-form-urlencoded');
    expect(await getText(id)).toContain(',"body":{"a":["1","2"],"b":"😀"},');
    const res = await fetch(`${server.url}/api/deliveries?limit=500`, { headers: server.auth });
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const page: unknown = await res.json();
    expect(Value.Check(DeliveryPageSchema, page)).toBe(true);
    expect((page as { items: unknown[] }).items).toHaveLength(bodies.length + 1);
  });

  it('sends the stream the same text as GET, on one data line', async () => {
    const client = await connectSse(`${server.url}/api/stream?after=0&source=text`, server.auth);
    const events = await client.waitForEvents(bodies.length);
    client.close();
    for (const event of events) {
      const { id } = JSON.parse(event.data) as { id: string };
      expect(event.data).toBe(await getText(id));
    }
  });

  it('takes and gives back 300,000 keys (4.6 MB)', async () => {
    const keys = Array.from({ length: 300_000 }, (_, i) => `"k${i}":${i}`);
    const { id } = await deliver(server, 'wide', `{${keys.join(',')}}`);
    const delivery = JSON.parse(await getText(id)) as { body: Record<string, number> };
    expect(Object.keys(delivery.body)).toHaveLength(300_000);
    expect(delivery.body.k299999).toBe(299_999);
  });
});
