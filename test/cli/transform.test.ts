import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import { transformDefinitions, transformUsers } from '../../src/config/transform-config.js';
import type { RunningApp } from '../helpers/app.js';
import { killAllClis, runCli } from '../helpers/cli.js';
import { runCliInOneProcess } from '../helpers/cli-in-process.js';
import { startWithConfig } from '../helpers/configured-app.js';

/** `reception transform <name> <delivery>` (CONTRACT 10 "Try it"): the output or the error, and the console lines. */

const CONFIG: ConfigFile = {
  destinations: { chat: { url: 'https://hooks.example.com/chat' } },
  transforms: {
    slack: {
      code: 'export default (e) => { console.log("amount", e.body.amount); return e.body.draft ? null : { body: { text: `paid ${e.body.id}` }, headers: { "x-kind": "invoice" } }; }',
    },
    thrower: { code: 'export default () => { throw new TypeError("nope") }' },
  },
  sources: { stripe: { forward: [{ to: 'chat', transform: 'slack' }] } },
};

let server: RunningApp;
beforeAll(async () => {
  server = await startWithConfig(CONFIG, {
    transforms: { definitions: transformDefinitions(CONFIG), users: transformUsers(CONFIG) },
  });
});
afterAll(async () => {
  killAllClis();
  await server.close();
});

async function store(body: unknown): Promise<string> {
  const res = await fetch(`${server.url}/api/webhook/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

const target = (): string[] => ['--url', server.url, '--token', server.token];

describe('reception transform', () => {
  it('prints the body and headers it would send, and the console lines', async () => {
    const id = await store({ id: 'in_1', amount: 1200 });
    const result = await runCli(['transform', 'slack', id, ...target()]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^slack \(version [0-9a-f]{12}\) on delivery \S+, \d+\.\d\d ms$/m);
    expect(result.stdout).toContain('body (sent as application/json): {\n  "text": "paid in_1"\n}');
    expect(result.stdout).toContain('header: x-kind: invoice');
    expect(result.stdout).toContain('console.log:\n  amount 1200\n');
  });

  it('a drop, an error (exit 1), --json, an unknown transform and an unknown delivery', async () => {
    const drafted = await store({ id: 'in_2', amount: 5, draft: true });
    const [dropped, failed, json, unknownTransform, unknownDelivery] = await runCliInOneProcess([
      ['transform', 'slack', drafted, ...target()],
      ['transform', 'thrower', drafted, ...target()],
      ['transform', 'slack', drafted, '--json', ...target()],
      ['transform', 'nope', drafted, ...target()],
      ['transform', 'slack', '0193e6a4-0000-7000-8000-000000000000', ...target()],
    ]);
    expect(dropped).toMatchObject({ code: 0 });
    expect(dropped?.stdout).toContain('dropped: the transform returned null');
    expect(failed).toMatchObject({ code: 1 });
    expect(failed?.stderr).toContain('error: TypeError: nope');
    expect(JSON.parse(json?.stdout ?? '')).toMatchObject({ output: null, logs: ['amount 5'] });
    expect(unknownTransform).toMatchObject({ code: 1 });
    expect(unknownTransform?.stderr).toContain('no transform named "nope"');
    expect(unknownDelivery).toMatchObject({ code: 1 });
    expect(unknownDelivery?.stderr).toContain('No delivery has the id or seq');
  });
});
