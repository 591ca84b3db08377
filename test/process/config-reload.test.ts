import { createHmac, randomUUID } from 'node:crypto';

import { writeFileSync } from 'node:fs';

import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { spawnServer, type ServerProcess } from '../helpers/server-process.js';

import { API_TOKEN, ServerChildren } from '../helpers/server-children.js';

import { eventually } from '../helpers/eventually.js';

import { ConfigFileError, loadConfigFile } from '../../src/config/source-config.js';
import { largeConfigText } from '../../bench/large-config.js';

/**
 * The config file in a real process (CONTRACT 4, issue 4): SIGHUP reloads it
 * under load without failing or dropping a request, and the new rules take
 * effect; an invalid new file is refused with a log line and the old rules
 * stay in force; an invalid file at start exits 1 naming the key.
 */

const auth = { authorization: `Bearer ${API_TOKEN}` };
const children = new ServerChildren();
afterEach(async () => {
  await children.cleanup();
});

const OLD_SECRET = 'reload-old-secret';
const NEW_SECRET = 'reload-new-secret';

const BEFORE = {
  sources: {
    github: { verify: { scheme: 'github', secrets: [OLD_SECRET] } },
    open: {},
  },
};
/** Strict mode on, a source added, a second secret for github (a rotation under way). */
const AFTER = {
  strict: true,
  sources: {
    github: { verify: { scheme: 'github', secrets: [OLD_SECRET, NEW_SECRET] } },
    open: {},
    added: { anyJson: true },
  },
};

interface Answer {
  status: number;
  text: string;
}

async function post(server: ServerProcess, source: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${server.url}/api/webhook/${source}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, text: await res.text() };
}

function githubHeaders(secret: string, body: string): Record<string, string> {
  return {
    'x-github-delivery': randomUUID(),
    'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  };
}

async function countOf(server: ServerProcess, source: string): Promise<number> {
  const res = await fetch(`${server.url}/api/sources`, { headers: auth });
  const { items } = (await res.json()) as { items: Array<{ source: string; count: number }> };
  return items.find((item) => item.source === source)?.count ?? 0;
}

function logEntries(server: ServerProcess): Array<Record<string, unknown>> {
  return server.logs.flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

async function hangUp(server: ServerProcess, message: string): Promise<Record<string, unknown>> {
  const seen = logEntries(server).filter((entry) => entry.msg === message).length;
  children.signal(server, 'SIGHUP');
  await eventually(
    () => logEntries(server).filter((entry) => entry.msg === message).length > seen,
    10_000,
    `no "${message}" log line after SIGHUP`,
  );
  return logEntries(server).filter((entry) => entry.msg === message)[seen] ?? {};
}

/** What a read of the file at start says of it (the ConfigFileError's message). */
function startMessage(file: string): string {
  try {
    loadConfigFile(file);
  } catch (error) {
    if (error instanceof ConfigFileError) return error.message;
    throw error;
  }
  throw new Error(`${file} loads`);
}

interface LoadReport {
  statuses: Map<number, number>;
  /** `performance.now()` at each answer. */
  answeredAt: number[];
  errors: string[];
  acknowledged: Map<string, Set<string>>;
}

/**
 * `senders` loops that each alternate an unsigned delivery to `open` and one
 * signed with the old secret to `github` (valid before and after the
 * reload), until `stop()` resolves or `perSender` requests were sent.
 */
function steadyLoad(
  server: ServerProcess,
  senders: number,
  perSender: number,
): { report: LoadReport; stop: () => Promise<LoadReport> } {
  const report: LoadReport = {
    statuses: new Map(),
    answeredAt: [],
    errors: [],
    acknowledged: new Map([
      ['open', new Set()],
      ['github', new Set()],
    ]),
  };
  let stopping = false;
  const loops = Array.from({ length: senders }, async (_, sender) => {
    for (let n = 0; n < perSender && !stopping; n += 1) {
      const source = n % 2 === 0 ? 'open' : 'github';
      const body = JSON.stringify({ sender, n, at: Date.now() });
      try {
        const answer = await post(server, source, body, source === 'github' ? githubHeaders(OLD_SECRET, body) : {});
        report.statuses.set(answer.status, (report.statuses.get(answer.status) ?? 0) + 1);
        report.answeredAt.push(performance.now());
        if (answer.status === 200) report.acknowledged.get(source)?.add((JSON.parse(answer.text) as { id: string }).id);
        else report.errors.push(`${answer.status} ${answer.text}`);
      } catch (error) {
        report.errors.push(String(error));
      }
    }
  });
  return {
    report,
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
      return report;
    },
  };
}

describe('SIGHUP', () => {
  it('reloads under steady load: no request fails or is lost, and the new rules take effect', async () => {
    const data = children.dataDir();
    const configFile = join(data, 'reception.json');
    writeFileSync(configFile, JSON.stringify(BEFORE));
    const server = await children.start({ RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, RECEPTION_CONFIG: configFile });

    // Before: not strict, no second secret.
    expect((await post(server, 'unnamed', '{"a":1}')).status).toBe(200);
    const rotated = '{"rotated":true}';
    expect((await post(server, 'github', rotated, githubHeaders(NEW_SECRET, rotated))).status).toBe(401);

    const load = steadyLoad(server, 4, 1000);
    const answered = (): number => load.report.answeredAt.length;
    await eventually(() => answered() >= 40, 20_000, 'the load did not get going');
    const answeredBefore = answered();
    const reloadStarted = performance.now();
    writeFileSync(configFile, JSON.stringify(AFTER));
    const reloaded = await hangUp(server, 'config reloaded');
    expect(reloaded).toMatchObject({ file: configFile, sources: 3, strict: true });
    const answeredAtReload = answered();
    await eventually(() => answered() >= answeredAtReload + 40, 20_000, 'the load stopped after the reload');
    const report = await load.stop();

    // The load ran across the reload: answers before the file changed, and after the reload took.
    expect(answeredBefore).toBeGreaterThanOrEqual(40);
    expect(report.answeredAt.filter((at) => at > reloadStarted).length).toBeGreaterThanOrEqual(40);
    expect(report.errors).toEqual([]);
    expect([...report.statuses.keys()]).toEqual([200]);
    const sent = report.statuses.get(200) ?? 0;
    expect(sent).toBeGreaterThan(20);
    // Every acknowledged delivery is in the inbox, once.
    expect(await countOf(server, 'open')).toBe(report.acknowledged.get('open')?.size);
    expect(await countOf(server, 'github')).toBe(report.acknowledged.get('github')?.size);

    // After: strict, the added source with its rules, the second secret.
    const unknown = await post(server, 'unnamed', '{"a":2}');
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.text)).toMatchObject({ code: 'unknown_source' });
    expect((await post(server, 'added', '[1,2,3]')).status).toBe(200);
    expect((await post(server, 'github', rotated, githubHeaders(NEW_SECRET, rotated))).status).toBe(200);
  });

  it('refuses an invalid new file with a log line naming the key, and keeps the old rules', async () => {
    const data = children.dataDir();
    const configFile = join(data, 'reception.yaml');
    writeFileSync(configFile, JSON.stringify(AFTER));
    const server = await children.start({ RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, RECEPTION_CONFIG: configFile });

    writeFileSync(configFile, 'sources:\n  github:\n    verify: { scheme: githib, secrets: [x] }\n');
    const refusedLine = await hangUp(server, 'config reload refused: the previous config stays in force');
    expect(refusedLine.level).toBe(50);
    expect(String(refusedLine.problem)).toContain('sources.github.verify.scheme');
    expect(String(refusedLine.problem)).toContain('"githib"');
    expect(refusedLine.problem).toBe(startMessage(configFile));

    writeFileSync(configFile, 'sources: [\n');
    const broken = await hangUp(server, 'config reload refused: the previous config stays in force');
    expect(String(broken.problem)).toContain('is not valid YAML or JSON');
    // Read on a thread of its own, the file is refused in the very words of a read at start, place included.
    expect(broken.problem).toBe(startMessage(configFile));
    expect(String(broken.problem)).toContain(`${configFile}:1:10: `);

    // The old rules are still in force: strict, the added source, both github secrets.
    expect((await post(server, 'unnamed', '{"a":1}')).status).toBe(404);
    expect((await post(server, 'added', '"any json"')).status).toBe(200);
    for (const secret of [OLD_SECRET, NEW_SECRET]) {
      const body = JSON.stringify({ secret: secret.length });
      expect((await post(server, 'github', body, githubHeaders(secret, body))).status).toBe(200);
    }
    const unsigned = await post(server, 'github', '{"unsigned":true}');
    expect(unsigned.status).toBe(401);

    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('reception_config_reloads_total{result="refused"} 2');
    expect(server.child.exitCode).toBeNull();
  });
});

describe('SIGHUP with a large file', () => {
  // The reading thread gives way to the event loop (nice 19): on a busy machine the read takes long.
  it('answers webhooks while the file is read: they are logged before the reload is', async () => {
    const data = children.dataDir();
    const configFile = join(data, 'reception.yaml');
    writeFileSync(configFile, JSON.stringify(BEFORE));
    const server = await children.start({ RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, RECEPTION_CONFIG: configFile });
    writeFileSync(configFile, largeConfigText(200_000));

    const seen = logEntries(server).length;
    children.signal(server, 'SIGHUP');
    // Sent after the signal: answered while the file is read, not after it.
    const ids: string[] = [];
    for (let n = 0; n < 5; n += 1) {
      const answer = await post(server, 'open', JSON.stringify({ type: 'not.listed', n }));
      expect(answer.status).toBe(200);
      ids.push((JSON.parse(answer.text) as { id: string }).id);
    }
    await eventually(
      () => logEntries(server).some((entry) => entry.msg === 'config reloaded'),
      100_000,
      'no "config reloaded" log line after SIGHUP',
    );
    const lines = logEntries(server).slice(seen);
    const reloadedAt = lines.findIndex((entry) => entry.msg === 'config reloaded');
    expect(lines[reloadedAt]).toMatchObject({ file: configFile, sources: 1, destinations: 1 });
    // The server's own log, in its order: each webhook's line comes before the reload's.
    const answeredAt = ids.map((id) => lines.findIndex((entry) => entry.msg === 'webhook' && entry.id === id));
    expect(
      answeredAt.every((at) => at >= 0 && at < reloadedAt),
      `webhook lines at ${answeredAt.join(', ')}, reload at ${reloadedAt}`,
    ).toBe(true);

    // The new file is in force: a listed event type is forwarded to the destination it names.
    const listed = await post(server, 'open', JSON.stringify({ type: 'evt.199999' }));
    const { id } = JSON.parse(listed.text) as { id: string };
    const delivery = (await (await fetch(`${server.url}/api/deliveries/${id}`, { headers: auth })).json()) as {
      forwards: Array<{ destination: string }>;
    };
    expect(delivery.forwards.map((forward) => forward.destination)).toEqual(['sink']);
    expect(server.child.exitCode).toBeNull();
  }, 120_000);
});

describe('an invalid config file at start', () => {
  async function startFails(env: Record<string, string>): Promise<string> {
    let failure: unknown;
    try {
      const server = await spawnServer(env);
      children.signal(server, 'SIGKILL');
    } catch (error) {
      failure = error;
    }
    expect(failure, 'the server started with an invalid config file').toBeInstanceOf(Error);
    return (failure as Error).message;
  }

  it('exits 1 with a message naming the bad key', async () => {
    const data = children.dataDir();
    const configFile = join(data, 'bad.yaml');
    writeFileSync(
      configFile,
      'strict: true\nsources:\n  sms:\n    verify: { scheme: twilio, secrets: [t] }\n  orders:\n    rateLimt: { requests: 1, perSeconds: 1 }\n',
    );
    const message = await startFails({ RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, RECEPTION_CONFIG: configFile });
    expect(message).toMatch(/^server exited \(1\) before listening/);
    expect(message).toContain(`${configFile} is not a valid Reception config`);
    expect(message).toContain('sources.orders.rateLimt: unknown key');
  });

  it('exits 1 when the file named by RECEPTION_CONFIG cannot be read', async () => {
    const data = children.dataDir();
    const message = await startFails({
      RECEPTION_DATA: data,
      RECEPTION_TOKEN: API_TOKEN,
      RECEPTION_CONFIG: join(data, 'missing.yaml'),
    });
    expect(message).toMatch(/^server exited \(1\) before listening/);
    expect(message).toContain(
      `cannot read the config file ${join(data, 'missing.yaml')}:\n  - there is no such file: check the path (ENOENT)`,
    );
  });
});
