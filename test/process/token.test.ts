import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';

import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { readyLine, type ServerProcess } from '../helpers/server-process.js';

import { childrenOf, type ServerChildren, sleep, timedExit } from '../helpers/server-children.js';

import { eventually } from '../helpers/eventually.js';

/**
 * CONTRACT 3: the API token comes from RECEPTION_TOKEN; when that is unset
 * the server generates one on first start, keeps it in its data directory
 * (mode 0600) and prints it once. It never reaches the logs.
 */

const CURL = /curl -H 'Authorization: Bearer ([^']+)' (http:\/\/\S+)\/api\/deliveries/;

async function inboxStatus(server: ServerProcess, token: string): Promise<number> {
  const res = await fetch(`${server.url}/api/deliveries`, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status;
}

/** Makes a few requests that carry `token`, then stops the server so that every log line is flushed. */
async function useAndStop(children: ServerChildren, server: ServerProcess, token: string): Promise<void> {
  const sent = await fetch(`${server.url}/api/webhook/tokens?probe=1`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: '{"probe":true}',
  });
  expect(sent.status).toBe(200);
  expect(await inboxStatus(server, `${token}x`)).toBe(401);
  children.signal(server, 'SIGTERM');
  expect((await timedExit(server, 5000)).code).toBe(0);
}

function expectNotInLogs(server: ServerProcess, token: string): void {
  expect(server.logs.length).toBeGreaterThan(2);
  expect(server.logs.filter((line) => line.includes(token))).toEqual([]);
}

describe.concurrent('API token', () => {
  it('is not kept when the server cannot listen, so that the next start prints a new one; the error names the variable', async (context) => {
    const children = childrenOf(context);
    const data = children.dataDir();
    // spawnServer rejects with the exit code and stderr of a server that exits before listening.
    await expect(children.start({ RECEPTION_DATA: data, RECEPTION_HOST: 'no-such-host.invalid' })).rejects.toThrow(
      /server exited \(1\) before listening: .*cannot listen on no-such-host\.invalid: the name does not resolve to an address \(RECEPTION_HOST, (ENOTFOUND|EAI_AGAIN)\)/,
    );
    expect(existsSync(join(data, 'token'))).toBe(false);

    const next = await children.start({ RECEPTION_DATA: data });
    await eventually(() => CURL.test(next.stderr()), 5000, `no curl command on stderr: ${next.stderr()}`);
    const [, token = ''] = CURL.exec(next.stderr()) ?? [];
    expect(await inboxStatus(next, token)).toBe(200);
  });

  it('is generated on first start, saved 0600, printed once with a curl command, and kept for later starts', async (context) => {
    const children = childrenOf(context);
    const data = children.dataDir();
    const file = join(data, 'token');

    const first = await children.start({ RECEPTION_DATA: data });
    await eventually(() => CURL.test(first.stderr()), 5000, `no curl command on stderr: ${first.stderr()}`);
    const [, token = '', commandUrl] = CURL.exec(first.stderr()) ?? [];
    expect(token.length).toBeGreaterThanOrEqual(16);
    expect(commandUrl).toBe(first.url);
    expect(first.stderr().split(token).length - 1).toBe(1);
    expect(first.stderr()).toContain(file);
    expect(first.stderr()).toContain(`Reception is ready. The inbox page: ${first.url}/  API docs: ${first.url}/docs`);

    expect(readFileSync(file, 'utf8').trim()).toBe(token);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await inboxStatus(first, token)).toBe(200);
    await useAndStop(children, first, token);
    expectNotInLogs(first, token);

    const second = await children.start({ RECEPTION_DATA: data });
    expect(await inboxStatus(second, token)).toBe(200);
    await sleep(200);
    expect(second.stderr()).not.toContain(token);
    expect(second.stderr()).not.toMatch(/curl|generated/);
    expect(readFileSync(file, 'utf8').trim()).toBe(token);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await useAndStop(children, second, token);
    expectNotInLogs(second, token);

    // RECEPTION_TOKEN wins over the saved one.
    const fromEnv = 'env-token-abcdefghijklmnop';
    const third = await children.start({ RECEPTION_DATA: data, RECEPTION_TOKEN: fromEnv });
    expect(await inboxStatus(third, fromEnv)).toBe(200);
    expect(await inboxStatus(third, token)).toBe(401);
    await useAndStop(children, third, fromEnv);
    expectNotInLogs(third, fromEnv);
    expect(third.stderr()).toBe(readyLine(third.url));
  });

  it('is RECEPTION_TOKEN when set: nothing is generated, saved or printed', async (context) => {
    const children = childrenOf(context);
    const data = children.dataDir();
    const fromEnv = 'env-token-0123456789-qrstuvwxyz';
    const server = await children.start({ RECEPTION_DATA: data, RECEPTION_TOKEN: fromEnv });
    expect(await inboxStatus(server, fromEnv)).toBe(200);
    expect(await fetch(`${server.url}/api/deliveries`).then((res) => res.status)).toBe(401);
    await useAndStop(children, server, fromEnv);
    expect(existsSync(join(data, 'token'))).toBe(false);
    expect(server.stderr()).toBe(readyLine(server.url));
    expectNotInLogs(server, fromEnv);
  });

  it('accepts a short RECEPTION_TOKEN, with a warning in the log that does not show it', async (context) => {
    const children = childrenOf(context);
    const short = 'test-token';
    const server = await children.start({ RECEPTION_DATA: children.dataDir(), RECEPTION_TOKEN: short });
    expect(await inboxStatus(server, short)).toBe(200);
    expect(await inboxStatus(server, 'test-tokeN')).toBe(401);
    const warnings = server.logs.filter((line) => line.includes('shorter than 16 characters'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0] ?? '{}')).toMatchObject({ level: 40, tokenLength: short.length });
    await useAndStop(children, server, short);
    expectNotInLogs(server, short);

    // A long token gets no such warning.
    const long = await children.start({ RECEPTION_DATA: children.dataDir(), RECEPTION_TOKEN: 'env-token-0123456789-qrstuvwxyz' });
    expect(long.logs.filter((line) => line.includes('shorter than'))).toEqual([]);
  });

  it('warns, without showing it, when the saved token file can be read by other users, as for the database file', async (context) => {
    const children = childrenOf(context);
    const data = children.dataDir();
    const file = join(data, 'token');
    const saved = 'rcp_saved-token-0123456789abcdef';
    writeFileSync(file, `${saved}\n`);
    chmodSync(file, 0o644);
    const open = await children.start({ RECEPTION_DATA: data });
    expect(await inboxStatus(open, saved)).toBe(200);
    const warnings = open.logs.filter((line) => line.includes(file) && line.includes('other users'));
    expect(warnings, open.logs.join('\n')).toHaveLength(1);
    expect(JSON.parse(warnings[0] ?? '{}')).toMatchObject({ level: 40 });
    expect(warnings[0]).toContain('mode 0644');
    expect(warnings[0]).toContain(`chmod 600 ${file}`);
    await useAndStop(children, open, saved);
    expectNotInLogs(open, saved);

    // Mode 0600: no such warning.
    chmodSync(file, 0o600);
    const closed = await children.start({ RECEPTION_DATA: data });
    expect(await inboxStatus(closed, saved)).toBe(200);
    expect(closed.logs.filter((line) => line.includes('other users'))).toEqual([]);
  });
});
