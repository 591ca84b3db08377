import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import { transformDefinitions, transformUsers } from '../../src/config/transform-config.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { launchChromium, skipBrowserTests } from '../helpers/browser.js';
import { DestinationServer } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import { api, forwardsOf, send, startForwarding } from '../helpers/forwarding-app.js';
import { openPage, type PageSession } from '../helpers/page.js';
import { ensureWebBuilt } from '../helpers/web-build.js';

// Were it ever parsed as HTML, this would request /x, set window.__pwned or open a dialog.
const HOSTILE = `<img src=x onerror="window.__pwned='issue';alert('issue')"> HTTP 500\u202eevil`;

/** The open issues the panel lists: kind and what the "About" cell says. */
async function listed(page: Page): Promise<Array<{ kind: string | null; about: string }>> {
  return page
    .locator('#issues-panel tr[data-issue]')
    .evaluateAll((rows) =>
      rows.map((row) => ({ kind: row.getAttribute('data-kind'), about: row.querySelector('td.subject')?.textContent ?? '' })),
    );
}

describe.skipIf(skipBrowserTests)('the issues in the top bar and their panel, in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser;
  let destination: DestinationServer;
  let down: DestinationServer;
  let server: RunningApp<InboxDatabase>;
  let session: PageSession | undefined;

  beforeAll(async () => {
    await ensureWebBuilt();
    browser = await launchChromium();
    destination = new DestinationServer();
    await destination.listen();
    // A destination whose forwards fail at their one attempt: dead letters.
    down = new DestinationServer();
    down.answer = () => ({ status: 500, headers: { 'content-type': 'text/plain' }, body: 'down' });
    await down.listen();
    const config: ConfigFile = {
      destinations: {
        app: { url: destination.url, allowPrivateNetwork: true },
        archive: { url: down.url, allowPrivateNetwork: true, retry: { attempts: 1, initialMs: 10, maxMs: 10 } },
        chat: { url: destination.url, allowPrivateNetwork: true },
      },
      // A transform that cannot run: its forwards fail at once, with its error.
      transforms: { thrower: { code: `export default () => { throw new Error(${JSON.stringify(HOSTILE)}); }` } },
      sources: {
        shop: { forward: [{ to: 'app' }] },
        billing: { forward: [{ to: 'archive' }] },
        tx: { forward: [{ to: 'chat', transform: 'thrower' }] },
        signed: { verify: { scheme: 'github', secrets: ['s3cret'] } },
      },
    };
    server = await startForwarding('sqlite', config, {
      issueTracker: { flushMs: 5 },
      refusalWriter: { intervalMs: 20 },
      transforms: { definitions: transformDefinitions(config), users: transformUsers(config) },
    });
  }, 120_000);
  afterAll(async () => {
    await browser.close();
    await server.close();
    await destination.close();
    await down.close();
  });
  afterEach(async () => {
    if (session !== undefined) {
      // Nothing the panel drew may trip the CSP, run, or log an error.
      expect(await session.violations()).toEqual([]);
      expect(session.dialogs).toEqual([]);
      expect(await session.page.evaluate('window.__pwned')).toBeUndefined();
      expect(session.requests.filter((url) => new URL(url).pathname === '/x')).toEqual([]);
      expect(session.consoleErrors.filter((e) => !e.includes('401'))).toEqual([]);
      await session.close();
      session = undefined;
    }
    for (const issue of await server.store.issues.list({ limit: 100, status: 'open' })) await server.app.issues.resolve(issue.id);
  });

  async function signal(...issues: Array<[Parameters<RunningApp['app']['issues']['occurred']>[0], string, string | null]>) {
    for (const [kind, subject, error] of issues) {
      server.app.issues.occurred(kind, subject, error);
      await server.app.issues.flush();
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
  }

  it('shows nothing at 0; the count of open issues; lists them with links, the error as text; Resolve takes one away', async () => {
    session = await openPage(browser, server);
    const { page } = session;
    const toggle = page.locator('[data-action="issues"]');
    // The accessible name: "Issues" at 0, "Issues 3 open" with three.
    expect(await page.getByRole('button', { name: 'Issues', exact: true }).count()).toBe(1);
    expect(await page.locator('.issue-count').isHidden()).toBe(true);

    await signal(
      ['destination_down', 'app', HOSTILE],
      ['verification_failing', 'shop', 'signature mismatch'],
      ['transform_failing', 'slack-text', null],
    );
    server.app.issues.occurred('destination_down', 'app', HOSTILE);
    await server.app.issues.flush();
    // The count comes with the next poll (every 5 s).
    await page.locator('.issue-count:not([hidden])').waitFor({ timeout: 8000 });
    expect(await page.locator('.issue-count').textContent()).toBe('3');
    expect(await page.getByRole('button', { name: 'Issues 3 open', exact: true }).count()).toBe(1);

    await toggle.click();
    await page.locator('#issues-panel tr[data-issue]').nth(2).waitFor({ timeout: 5000 });
    expect(await listed(page)).toEqual([
      { kind: 'transform_failing', about: 'transform slack-text' },
      { kind: 'verification_failing', about: 'source shop' },
      { kind: 'destination_down', about: 'destination app' },
    ]);
    const down = page.locator('#issues-panel tr[data-kind="destination_down"]');
    expect(await down.locator('td.count').textContent()).toBe('2');
    // The error is text: its markup shown as written, the bidi control as a visible escape.
    expect(await down.locator('td.last-error').textContent()).toBe(HOSTILE.replace('\u202e', '\\u202e'));
    expect(await down.locator('td.last-error img').count()).toBe(0);
    expect(await down.locator('td.first time').getAttribute('datetime')).toMatch(/Z$/);

    await page.locator('#issues-panel tr[data-kind="transform_failing"] [data-action="resolve-issue"]').click();
    await page.locator('#issues-panel tr[data-kind="transform_failing"]').waitFor({ state: 'detached', timeout: 5000 });
    expect(await page.locator('.issue-count').textContent()).toBe('2');
    expect((await server.store.issues.countOpen()).transform_failing).toBe(0);

    // A source's link: the inbox of that source.
    await page.locator('#issues-panel tr[data-kind="verification_failing"] a[data-source]').click();
    await page.waitForFunction("location.hash === '#source=shop'");
    expect(await page.locator('#issues-panel').isHidden()).toBe(true);

    // A destination's link: the Destinations panel, on its row.
    await toggle.click();
    await page.locator('#issues-panel a[data-destination-link]').click();
    await page.locator('#destinations-panel tr[data-destination="app"].revealed').waitFor({ timeout: 5000 });
    expect(await page.locator('#issues-panel').isHidden()).toBe(true);
  });

  it('resolved elsewhere (another instance, the CLI): gone from the open panel at its next refresh', async () => {
    await signal(['dead_letters', 'app', 'HTTP 410'], ['backlog', 'app', null]);
    session = await openPage(browser, server);
    const { page } = session;
    await page.locator('[data-action="issues"]').click();
    await page.locator('#issues-panel tr[data-issue]').nth(1).waitFor({ timeout: 5000 });
    const [backlog] = await server.store.issues.list({ limit: 1, status: 'open' });
    await server.app.issues.resolve(backlog?.id ?? '');
    await page.locator('#issues-panel tr[data-kind="backlog"]').waitFor({ state: 'detached', timeout: 5000 });
    await server.app.issues.resolve((await server.store.issues.list({ limit: 1, status: 'open' }))[0]?.id ?? '');
    await page.locator('#issues-panel [data-empty]').waitFor({ timeout: 5000 });
    expect(await page.locator('.issue-count').isHidden()).toBe(true);
  });

  it('on a phone: the count in the top bar, each issue a card with its Resolve button', async () => {
    await signal(['dead_letters', 'app', 'HTTP 410: gone for good, and a long explanation that must wrap on a phone']);
    session = await openPage(browser, server, { viewport: { width: 390, height: 800 } });
    const { page } = session;
    await page.locator('.issue-count:not([hidden])').waitFor({ timeout: 8000 });
    await page.locator('[data-action="issues"]').click();
    const resolve = page.locator('#issues-panel [data-action="resolve-issue"]');
    await resolve.waitFor({ timeout: 5000 });
    const box = await resolve.boundingBox();
    expect(box?.x ?? -1).toBeGreaterThanOrEqual(0);
    expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(390);
    // No sideways scrolling: the panel fits the screen.
    expect(await page.evaluate("document.getElementById('issues-panel').scrollWidth")).toBeLessThanOrEqual(390);
    // Expanded, its history fits too.
    await page.locator('#issues-panel [data-action="expand-issue"]').click();
    await page.locator('#issues-panel tr.issue-history-row [data-history]').waitFor({ timeout: 5000 });
    await page.locator('#issues-panel tr.issue-history-row [data-none]').waitFor({ timeout: 5000 });
    expect(await page.evaluate("document.getElementById('issues-panel').scrollWidth")).toBeLessThanOrEqual(390);
  });

  it('a dead_letters issue expands (by keyboard) to its history and its failed forwards, newest first; a link opens the delivery; "Retry all failed" retries them', async () => {
    const older = await send(server, 'billing', '{"invoice":1}');
    const newer = await send(server, 'billing', '{"invoice":2}');
    for (const id of [older, newer]) await eventually(async () => (await forwardsOf(server, id))[0]?.status === 'failed');
    await signal(['dead_letters', 'archive', HOSTILE]);
    session = await openPage(browser, server);
    const { page } = session;
    await page.locator('[data-action="issues"]').click();
    const expand = page.locator('#issues-panel tr[data-kind="dead_letters"] [data-action="expand-issue"]');
    await expand.waitFor({ timeout: 5000 });
    expect(await expand.getAttribute('aria-expanded')).toBe('false');
    await expand.focus();
    await page.keyboard.press('Enter');
    const history = page.locator('#issues-panel tr.issue-history-row');
    await history.locator('li[data-forward]').nth(1).waitFor({ timeout: 5000 });
    expect(await expand.getAttribute('aria-expanded')).toBe('true');
    expect(await history.getAttribute('id')).toBe(await expand.getAttribute('aria-controls'));
    // The whole history: opened (absolute, relative, the ISO time on hover), last occurrence, count, the error as text.
    const line = history.locator('[data-history]');
    expect(await line.locator('dt').allTextContents()).toEqual(['Opened', 'Last occurrence', 'Count', 'Status', 'Last error']);
    // The count as the row says it (the dead letters themselves count too, each an occurrence).
    const count = Number(await page.locator('#issues-panel tr[data-kind="dead_letters"] td.count').textContent());
    expect(count).toBeGreaterThanOrEqual(1);
    expect(await line.locator('dd').nth(2).textContent()).toBe(`${count} ${count === 1 ? 'occurrence' : 'occurrences'}`);
    expect(await line.locator('dd').nth(0).locator('time').getAttribute('title')).toMatch(/local · \d{4}-\d\d-\d\dT.*Z$/);
    expect(await line.locator('dd').nth(0).locator('[data-relative]').textContent()).toMatch(/ago|just now/);
    expect(await line.locator('.last-error').textContent()).toBe(HOSTILE.replace('\u202e', '\\u202e'));
    expect(await line.locator('img').count()).toBe(0);
    // The destination's failed forwards, newest first, each with its error and its delivery's link.
    const links = history.locator('li[data-forward] a[data-delivery]');
    expect(await links.evaluateAll((as) => as.map((a) => a.getAttribute('data-delivery')))).toEqual([newer, older]);
    expect(await history.locator('li[data-forward] .last-error').allTextContents()).toEqual(['HTTP 500', 'HTTP 500']);

    // Still expanded after the panel's next refreshes.
    await page.waitForTimeout(2500);
    expect(await history.locator('li[data-forward]').count()).toBe(2);

    // A delivery's link: its detail, the panel closed.
    await history.locator(`a[data-delivery="${older}"]`).click();
    await page.waitForFunction(`new URLSearchParams(location.hash.slice(1)).get('id') === ${JSON.stringify(older)}`);
    await page.locator(`.detail[data-id="${older}"]`).waitFor({ timeout: 5000 });
    expect(await page.locator('#issues-panel').isHidden()).toBe(true);

    // Opened again, the panel keeps it expanded; Space collapses it, Enter expands it again.
    await page.locator('[data-action="issues"]').click();
    await history.locator('li[data-forward]').nth(1).waitFor({ timeout: 5000 });
    await expand.focus();
    await page.keyboard.press('Space');
    await history.waitFor({ state: 'detached', timeout: 5000 });
    expect(await expand.getAttribute('aria-expanded')).toBe('false');
    await page.keyboard.press('Enter');
    await history.locator('li[data-forward]').nth(1).waitFor({ timeout: 5000 });

    // "Retry all failed": both are sent again, which resolves the issue (no failed forward left);
    // failed again (one attempt each), they open a new one.
    const issueId = await page.locator('#issues-panel tr[data-kind="dead_letters"]').getAttribute('data-issue');
    const before = down.requests.length;
    await history.locator('[data-action="retry-failed"]').click();
    await eventually(async () => down.requests.length >= before + 2, 10_000, 'the failed forwards were not retried');
    await page.locator(`#issues-panel tr[data-issue="${issueId}"]`).waitFor({ state: 'detached', timeout: 8000 });
    await page.locator('#issues-panel tr[data-kind="dead_letters"]').waitFor({ timeout: 8000 });
  });

  it('a backlog issue expands to the forwards waiting, oldest first, with their attempt counts', async () => {
    expect((await api(server, '/api/destinations/app/pause', { method: 'POST' })).status).toBe(204);
    try {
      const ids: string[] = [];
      for (let n = 1; n <= 3; n++) ids.push(await send(server, 'shop', `{"order":${n}}`));
      for (const id of ids) await eventually(async () => (await forwardsOf(server, id))[0]?.status === 'pending');
      await signal(['backlog', 'app', 'oldest forward waiting 412s']);
      session = await openPage(browser, server);
      const { page } = session;
      await page.locator('[data-action="issues"]').click();
      await page.locator('#issues-panel tr[data-kind="backlog"] [data-action="expand-issue"]').click();
      const history = page.locator('#issues-panel tr.issue-history-row');
      await history.locator('li[data-forward]').nth(2).waitFor({ timeout: 5000 });
      expect(await history.locator('h3').textContent()).toBe('Waiting forwards, oldest first');
      expect(
        await history.locator('a[data-delivery]').evaluateAll((as) => as.map((a) => a.getAttribute('data-delivery'))),
      ).toEqual(ids);
      expect(await history.locator('li[data-forward] .attempts').allTextContents()).toEqual([
        '0 attempts',
        '0 attempts',
        '0 attempts',
      ]);
      expect(await history.locator('[data-action="retry-failed"]').count()).toBe(0);
    } finally {
      expect((await api(server, '/api/destinations/app/resume', { method: 'POST' })).status).toBe(204);
    }
  });

  it('"Resolved" lists the resolved issues with when each was resolved; "Open" goes back', async () => {
    await signal(['backlog', 'archive', 'oldest pending 20 min']);
    const [backlog] = await server.store.issues.list({ limit: 1, status: 'open' });
    const id = backlog?.id ?? '';
    await server.app.issues.resolve(id);
    session = await openPage(browser, server);
    const { page } = session;
    await page.locator('[data-action="issues"]').click();
    await page.locator('#issues-panel [data-empty]').waitFor({ timeout: 5000 });
    expect(await page.locator('#issues-panel h2').textContent()).toBe('Open issues');
    const resolvedToggle = page.locator('#issues-panel [data-show="resolved"]');
    expect(await resolvedToggle.getAttribute('aria-pressed')).toBe('false');
    await resolvedToggle.click();
    const row = page.locator(`#issues-panel tr[data-issue="${id}"]`);
    await row.waitFor({ timeout: 5000 });
    expect(await resolvedToggle.getAttribute('aria-pressed')).toBe('true');
    expect(await page.locator('#issues-panel h2').textContent()).toBe('Resolved issues');
    expect(await row.getAttribute('data-status')).toBe('resolved');
    expect(await row.locator('td.resolved time').getAttribute('datetime')).toMatch(/Z$/);
    expect(await row.locator('[data-action="resolve-issue"]').count()).toBe(0);
    // The top bar still counts the open ones: none.
    expect(await page.locator('.issue-count').isHidden()).toBe(true);
    // Expanded: its history says when it was resolved.
    await row.locator('[data-action="expand-issue"]').click();
    const line = page.locator(`#issues-panel tr[data-history-of="${id}"] [data-history]`);
    await line.waitFor({ timeout: 5000 });
    expect(await line.locator('dt').allTextContents()).toEqual(['Opened', 'Last occurrence', 'Count', 'Resolved', 'Last error']);
    const resolvedAt = (await server.store.issues.list({ limit: 100, status: 'resolved' })).find((i) => i.id === id)?.resolvedAt;
    expect(resolvedAt).toEqual(expect.any(Number));
    expect(await line.locator('dd').nth(3).locator('time').getAttribute('datetime')).toBe(
      new Date(resolvedAt ?? 0).toISOString(),
    );
    await page.locator('#issues-panel [data-show="open"]').click();
    await page.locator('#issues-panel [data-empty]').waitFor({ timeout: 5000 });
    expect(await row.count()).toBe(0);
  });

  it('a transform_failing issue expands to the forwards its transform failed, the error as text', async () => {
    const id = await send(server, 'tx', '{"n":1}');
    await eventually(async () => (await forwardsOf(server, id))[0]?.status === 'failed');
    await signal(['transform_failing', 'thrower', HOSTILE]);
    session = await openPage(browser, server);
    const { page } = session;
    await page.locator('[data-action="issues"]').click();
    await page.locator('#issues-panel tr[data-kind="transform_failing"] [data-action="expand-issue"]').click();
    const history = page.locator('#issues-panel tr.issue-history-row');
    await history.locator('li[data-forward]').first().waitFor({ timeout: 5000 });
    expect(await history.locator('a[data-delivery]').evaluateAll((as) => as.map((a) => a.getAttribute('data-delivery')))).toEqual(
      [id],
    );
    const error = await history.locator('li[data-forward] .last-error').textContent();
    expect(error).toMatch(/^transform_failed: /);
    expect(error).toContain('<img src=x onerror=');
    expect(await history.locator('img').count()).toBe(0);
  });

  it('a verification_failing issue expands to the source\'s bad-signature refusals; "Show in Refused" opens them', async () => {
    const refused = await fetch(`${server.url}/api/webhook/signed`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=00' },
      body: '{"a":1}',
    });
    expect(refused.status).toBe(401);
    await server.app.refusals.flush();
    await signal(['verification_failing', 'signed', 'no secret matches']);
    session = await openPage(browser, server);
    const { page } = session;
    await page.locator('[data-action="issues"]').click();
    await page.locator('#issues-panel tr[data-kind="verification_failing"] [data-action="expand-issue"]').click();
    const history = page.locator('#issues-panel tr.issue-history-row');
    await history.locator('li[data-refusal]').first().waitFor({ timeout: 5000 });
    expect(await history.locator('li[data-refusal]').count()).toBe(1);
    expect(await history.locator('li[data-refusal]').textContent()).toContain('401 signature_invalid');
    expect(await history.locator('a[data-failed-verification]').getAttribute('href')).toBe('#source=signed&verification=failed');
    await history.locator('[data-action="show-refusals"]').click();
    await page.locator('#refusals-panel .refusal').first().waitFor({ timeout: 5000 });
    await page.waitForFunction("location.hash === '#source=signed'");
    expect(await page.locator('#issues-panel').isHidden()).toBe(true);
  });
});
