import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { API_TOKEN, ServerChildren } from '../helpers/server-children.js';
import type { ServerProcess } from '../helpers/server-process.js';

/**
 * RECEPTION_ACCEPT_ANY=on (docs/settings.md): the sources the config file
 * does not name take every body, so that a first try needs no config file;
 * a source the file names keeps its own rules, and off (the default) keeps
 * the contract's JSON objects and forms.
 */

const children = new ServerChildren();
afterAll(() => children.cleanup());

/** Bodies that a source with the default rules refuses: 415, or 422 for JSON that is no object. */
const BODIES: Array<{ name: string; contentType: string | undefined; body: string; refused?: number }> = [
  { name: 'text/plain', contentType: 'text/plain', body: 'hello' },
  { name: 'XML', contentType: 'application/xml', body: '<a>1</a>' },
  {
    name: 'multipart',
    contentType: 'multipart/form-data; boundary=b',
    body: '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--b--\r\n',
  },
  { name: 'no content type', contentType: undefined, body: 'raw bytes' },
  { name: 'an unknown type', contentType: 'application/x-thing', body: 'thing' },
  { name: 'a JSON array', contentType: 'application/json', body: '[1,2]', refused: 422 },
];

async function post(server: ServerProcess, source: string, contentType: string | undefined, body: string): Promise<Response> {
  return fetch(`${server.url}/api/webhook/${source}`, {
    method: 'POST',
    body: Buffer.from(body),
    headers: contentType === undefined ? {} : { 'content-type': contentType },
  });
}

async function rawOf(server: ServerProcess, id: string): Promise<string> {
  const response = await fetch(`${server.url}/api/deliveries/${id}/raw`, { headers: { authorization: `Bearer ${API_TOKEN}` } });
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer()).toString();
}

describe('RECEPTION_ACCEPT_ANY', { timeout: 60_000 }, () => {
  it('on: a source the config file does not name takes every body, byte for byte; a named one keeps its rules', async () => {
    const data = children.dataDir();
    const config = join(data, 'reception.yaml');
    writeFileSync(config, 'sources:\n  strict-one: {}\n');
    const server = await children.start({
      RECEPTION_DATA: data,
      RECEPTION_TOKEN: API_TOKEN,
      RECEPTION_CONFIG: config,
      RECEPTION_ACCEPT_ANY: 'on',
    });
    expect(server.logs.some((line) => line.includes('RECEPTION_ACCEPT_ANY=on'))).toBe(true);
    for (const { name, contentType, body, refused = 415 } of BODIES) {
      const answer = await post(server, 'trying', contentType, body);
      expect(answer.status, name).toBe(200);
      const { id } = (await answer.json()) as { id: string };
      expect(await rawOf(server, id), name).toBe(body);
      // The source the file names still takes JSON objects and forms only.
      expect((await post(server, 'strict-one', contentType, body)).status, name).toBe(refused);
    }
  });

  it('off (the default): a source the config file does not name refuses those bodies, as the contract says', async () => {
    const server = await children.start({ RECEPTION_DATA: children.dataDir(), RECEPTION_TOKEN: API_TOKEN });
    expect(server.logs.some((line) => line.includes('RECEPTION_ACCEPT_ANY'))).toBe(false);
    for (const { name, contentType, body, refused = 415 } of BODIES) {
      expect((await post(server, 'trying', contentType, body)).status, name).toBe(refused);
    }
    expect((await post(server, 'trying', 'application/json', '{"a":1}')).status).toBe(200);
  });

  it('refuses a value other than on or off at start, naming the variable', async () => {
    await expect(
      children.start({ RECEPTION_DATA: children.dataDir(), RECEPTION_TOKEN: API_TOKEN, RECEPTION_ACCEPT_ANY: 'yes' }),
    ).rejects.toThrow(/RECEPTION_ACCEPT_ANY/);
  });
});
