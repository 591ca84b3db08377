import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { launchChromium, skipBrowserTests } from '../helpers/browser.js';
import { DestinationServer } from '../helpers/destination-server.js';
import { startForwarding } from '../helpers/forwarding-app.js';
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
  let server: RunningApp<InboxDatabase>;
  let session: PageSession | undefined;

  beforeAll(async () => {
    await ensureWebBuilt();
    browser = await launchChromium();
    destination = new DestinationServer();
    await destination.listen();
    server = await startForwarding(
      'sqlite',
      {
        destinations: { app: { url: destination.url, allowPrivateNetwork: true } },
        sources: { shop: { forward: [{ to: 'app' }] } },
      },
      { issueTracker: { flushMs: 5 } },
    );
  }, 120_000);
  afterAll(async () => {
    await browser.close();
    await server.close();
    await destination.close();
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
  });
});
