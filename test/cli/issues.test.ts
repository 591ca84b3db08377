import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import { startAppOnSqlite, type RunningApp } from '../helpers/app.js';
import { runCliInOneProcess } from '../helpers/cli-in-process.js';

// A subject may hold a right-to-left override and an error any text: the CLI prints them as escapes.
const HOSTILE_SUBJECT = 'shop\u202etxt.exe';

let server: RunningApp<InboxDatabase>;

beforeAll(async () => {
  server = await startAppOnSqlite({ issueTracker: { flushMs: 5 } });
  const issues = server.app.issues;
  issues.occurred('destination_down', 'app', 'HTTP 500');
  issues.occurred('destination_down', 'app', 'HTTP 503');
  await issues.flush();
  // Each opens at a millisecond of its own: the list is newest first.
  await new Promise((resolve) => setTimeout(resolve, 3));
  issues.occurred('verification_failing', HOSTILE_SUBJECT, 'bad\n\u001b[31mred');
  await issues.flush();
  await new Promise((resolve) => setTimeout(resolve, 3));
  issues.occurred('backlog', 'old', 'oldest forward 400 s');
  issues.cleared('backlog', 'old');
  await issues.flush();
});

afterAll(async () => {
  await server.close();
});

/** Several command lines against the server, in one process (test/helpers/cli-in-process.ts), in order. */
function clis(...runs: string[][]): ReturnType<typeof runCliInOneProcess> {
  return runCliInOneProcess(runs, { RECEPTION_URL: server.url, RECEPTION_TOKEN: server.token });
}

describe('reception issues', () => {
  it('lists issues as a table, open ones only with --status open, NDJSON with --json; resolves one by id', async () => {
    const open = await server.store.issues.list({ limit: 10, status: 'open' });
    const app = open.find((i) => i.subject === 'app')?.id ?? '';
    const [all, onlyOpen, json, resolved, again, after, unknown] = await clis(
      ['issues'],
      ['issues', '--status', 'open'],
      ['issues', '--json', '--status', 'resolved'],
      ['issues', 'resolve', app],
      ['issues', 'resolve', app],
      ['issues', '--status', 'open'],
      ['issues', 'resolve', '019ab2c4-0000-7000-8000-000000000000'],
    );
    expect(all?.code).toBe(0);
    const lines = all?.stdout.trimEnd().split('\n') ?? [];
    expect(lines[0]).toMatch(/^ID\s+KIND\s+SUBJECT\s+STATUS\s+COUNT\s+OPENED\s+LAST\s+LAST ERROR$/);
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(/backlog\s+old\s+resolved \d+s ago\s+1\s+/);
    expect(lines[2]).toContain('verification_failing  shop\\u202etxt.exe');
    expect(lines[2]).toMatch(/open\s+1\s+\d+s ago\s+\d+s ago\s+bad\\n\\e\[31mred$/);
    expect(lines[3]).toMatch(/destination_down\s+app\s+open\s+2\s+/);
    // The newest error (a newline and an escape sequence in it are shown as escapes).
    expect(lines[3]).toMatch(/HTTP 503$/);
    expect(all?.stdout).not.toContain('\u001b');
    expect(all?.stdout).not.toContain('\u202e');

    expect(onlyOpen?.stdout.trimEnd().split('\n')).toHaveLength(3);
    expect(onlyOpen?.stdout).not.toContain('backlog');

    const rows = (json?.stdout.trimEnd().split('\n') ?? []).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows).toEqual([expect.objectContaining({ kind: 'backlog', subject: 'old', status: 'resolved', count: 1 })]);

    expect(resolved).toMatchObject({ code: 0, stdout: `Resolved ${app}.\n` });
    expect(again?.code).toBe(0);
    expect(after?.stdout).not.toContain('destination_down');
    expect(unknown?.code).toBe(1);
    expect(unknown?.stderr).toContain('no issue has the id "019ab2c4-0000-7000-8000-000000000000"');
  });

  it('says what is wrong with the command line (exit 2)', async () => {
    const [status, action, noId, jsonResolve] = await clis(
      ['issues', '--status', 'opne'],
      ['issues', 'reslove', 'x'],
      ['issues', 'resolve'],
      ['issues', 'resolve', 'x', '--json'],
    );
    expect(status).toMatchObject({ code: 2 });
    expect(status?.stderr).toContain('--status: expected open or resolved, got "opne" (did you mean "open"?)');
    expect(action?.code).toBe(2);
    expect(action?.stderr).toContain('unknown action "reslove" (did you mean "resolve"?)');
    expect(noId?.code).toBe(2);
    expect(noId?.stderr).toContain('which issue?');
    expect(jsonResolve?.code).toBe(2);
    expect(jsonResolve?.stderr).toContain('--json goes with the list');
  });

  it('a wrong token exits 1 and says so', async () => {
    const [refused] = await runCliInOneProcess([['issues', '--status', 'open', '--token', 'wrong-token-0123456789']], {
      RECEPTION_URL: server.url,
    });
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toContain('401');
  });
});
