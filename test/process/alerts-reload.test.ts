import { afterEach, describe, expect, it } from 'vitest';
import type { ServerProcess } from '../helpers/server-process.js';
import { apiCall, logEntries, loopbackDestination, writeConfig } from '../helpers/forwarding-process.js';
import { API_TOKEN, ServerChildren } from '../helpers/server-children.js';
import { eventually } from '../helpers/eventually.js';

/**
 * `alerts` changes with the config file (docs/alerts.md, docs/config.md): a
 * real server process logs the notify destinations it loaded; on SIGHUP the
 * new ones are in force (the notification route's transform is listed as
 * one of its users, or no longer); a file whose notify names a destination
 * that is not there is refused and the previous alerts stay.
 */

const children = new ServerChildren();
afterEach(async () => {
  await children.cleanup();
});

const count = (server: ServerProcess, msg: string): number => logEntries(server).filter((e) => e.msg === msg).length;

async function reload(server: ServerProcess, dir: string, config: unknown, expected: string): Promise<Record<string, unknown>> {
  const seen = count(server, expected);
  writeConfig(dir, config);
  children.signal(server, 'SIGHUP');
  await eventually(() => count(server, expected) > seen, 10_000, `no "${expected}" line after SIGHUP`);
  return logEntries(server).filter((e) => e.msg === expected)[seen] ?? {};
}

async function usersOf(server: ServerProcess, name: string): Promise<unknown> {
  const { status, json } = await apiCall<{ items: Array<{ name: string; usedBy: unknown }> }>(server, '/api/transforms');
  expect(status).toBe(200);
  return json.items.find((t) => t.name === name)?.usedBy;
}

describe('SIGHUP and alerts', () => {
  it('loads, reloads and refuses the notify destinations', async () => {
    const data = children.dataDir();
    const base = {
      destinations: { ops: loopbackDestination(9), slack: loopbackDestination(9) },
      transforms: { 'issue-to-slack': { code: 'export default (e) => ({ body: { text: e.body.type } })' } },
      sources: { orders: {} },
    };
    const file = writeConfig(data, { ...base, alerts: { notify: ['ops', { to: 'slack', transform: 'issue-to-slack' }] } });
    const server = await children.start({ RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, RECEPTION_CONFIG: file });
    expect(logEntries(server).find((e) => e.msg === 'config loaded')).toMatchObject({ notify: ['ops', 'slack'] });
    expect(await usersOf(server, 'issue-to-slack')).toEqual([{ source: 'reception:issues', destination: 'slack' }]);

    expect(
      await reload(server, data, { ...base, alerts: { backlogSeconds: 60, notify: ['ops'] } }, 'config reloaded'),
    ).toMatchObject({
      notify: ['ops'],
    });
    expect(await usersOf(server, 'issue-to-slack')).toEqual([]);

    const refused = await reload(
      server,
      data,
      { ...base, alerts: { notify: ['opz'] } },
      'config reload refused: the previous config stays in force',
    );
    expect(String(refused.problem)).toContain('alerts.notify[0]: there is no destination "opz" (did you mean "ops"?)');
    expect(await usersOf(server, 'issue-to-slack')).toEqual([]);
  }, 30_000);
});
