import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { describeViolations, runAxe, severe } from '../helpers/axe.js';
import { launchChromium, skipBrowserTests } from '../helpers/browser.js';
import { DestinationServer } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import { forwardsOf, send, startForwarding } from '../helpers/forwarding-app.js';
import { openPage } from '../helpers/page.js';
import { ensureWebBuilt } from '../helpers/web-build.js';

type Theme = 'light' | 'dark';

/**
 * Rules of lesser impact that the page once broke and keeps fixed: one main
 * landmark, landmarks told apart by their names, no empty table header,
 * headings one level at a time, roles allowed on their elements.
 */
const KEPT_FIXED = ['landmark-one-main', 'landmark-unique', 'empty-table-header', 'heading-order', 'aria-allowed-role'];

/**
 * axe-core on each view of the page, in both themes: a delivery forwarded,
 * one whose forward failed, one unsigned, a refused request, the
 * destinations configured and the open issues. A violation axe rates critical or serious fails
 * the test (and those of KEPT_FIXED), with its rule, impact and the nodes it
 * found it on.
 */
describe.skipIf(skipBrowserTests)('accessibility of the inbox page (axe-core in Chromium)', { timeout: 90_000 }, () => {
  let browser: Browser;
  let good: DestinationServer;
  let bad: DestinationServer;
  let server: RunningApp<InboxDatabase>;
  let forwarded: string;
  let failed: string;

  beforeAll(async () => {
    await ensureWebBuilt();
    browser = await launchChromium();
    good = new DestinationServer();
    bad = new DestinationServer();
    bad.answer = () => ({ status: 500, headers: { 'content-type': 'text/plain' }, body: 'down' });
    await good.listen();
    await bad.listen();
    server = await startForwarding(
      'sqlite',
      {
        destinations: {
          app: { url: good.url, allowPrivateNetwork: true },
          archive: { url: bad.url, allowPrivateNetwork: true, retry: { attempts: 1, initialMs: 10, maxMs: 10 } },
        },
        sources: { shop: { forward: [{ to: 'app' }] }, billing: { forward: [{ to: 'archive' }] }, plain: {} },
      },
      { refusalWriter: { intervalMs: 20 } },
    );
    forwarded = await send(server, 'shop', '{"order":{"id":1,"items":[{"sku":"a","qty":2}]},"paid":true}');
    failed = await send(server, 'billing', '{"invoice":7}');
    await send(server, 'plain', '{"hello":"world"}');
    const refused = await fetch(`${server.url}/api/webhook/shop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'not json',
    });
    expect(refused.status).toBe(400);
    await server.app.refusals.flush();
    await eventually(async () => (await forwardsOf(server, forwarded))[0]?.status === 'succeeded');
    await eventually(async () => (await forwardsOf(server, failed))[0]?.status === 'failed');
    // Open issues: the top bar's count on every view, and the issues panel.
    server.app.issues.occurred('dead_letters', 'archive', 'HTTP 500: down');
    server.app.issues.occurred('verification_failing', 'shop', 'signature mismatch');
    server.app.issues.occurred('transform_failing', 'slack-text', null);
    await server.app.issues.flush();
  }, 120_000);
  afterAll(async () => {
    await browser.close();
    await server.close();
    await good.close();
    await bad.close();
  });

  /** Opens the page in `theme` at `hash`, lets `ready` bring up the view, and runs axe on it. */
  async function check(theme: Theme, hash: string, ready: (page: Page) => Promise<void>, logIn = true): Promise<void> {
    const session = await openPage(browser, server, { colorScheme: theme, hash, logIn });
    try {
      await ready(session.page);
      const all = await runAxe(session.page);
      const violations = [...severe(all), ...all.filter((v) => KEPT_FIXED.includes(v.id))];
      expect(violations, `axe found, in the ${theme} theme:\n${describeViolations(violations)}`).toEqual([]);
    } finally {
      await session.close();
    }
  }

  for (const theme of ['light', 'dark'] as const) {
    it(`the login form (${theme})`, async () => {
      await check(theme, '', (page) => page.getByLabel('API token').waitFor({ timeout: 5000 }), false);
    });

    it(`the list (${theme})`, async () => {
      await check(theme, '', async (page) => {
        await page.locator('.delivery-list li[data-id]').nth(2).waitFor({ timeout: 5000 });
        await page.locator('.delivery-list .forward-badge[data-state]').nth(1).waitFor({ timeout: 5000 });
      });
    });

    it(`a source's view with its traffic chart (${theme})`, async () => {
      await check(theme, '#source=shop', async (page) => {
        await page.locator('.traffic-chart svg.traffic-svg').waitFor({ timeout: 5000 });
      });
    });

    it(`a forwarded delivery's detail, with its JSON tree (${theme})`, async () => {
      await check(theme, `#id=${forwarded}`, async (page) => {
        await page.locator('.forwards-section .forward[data-status="succeeded"]').waitFor({ timeout: 5000 });
        await page.locator('.json-tree').first().waitFor({ timeout: 5000 });
      });
    });

    it(`the detail of a delivery whose forward failed (${theme})`, async () => {
      await check(theme, `#id=${failed}`, async (page) => {
        await page.locator('.forwards-section .forward[data-status="failed"]').waitFor({ timeout: 5000 });
      });
    });

    it(`the destinations panel (${theme})`, async () => {
      await check(theme, '', async (page) => {
        await page.locator('[data-action="destinations"]').click();
        await page.locator('.destinations-table tr[data-destination="archive"]').waitFor({ timeout: 5000 });
      });
    });

    it(`the open issues panel, with the count in the top bar (${theme})`, async () => {
      await check(theme, '', async (page) => {
        await page.locator('.issue-count:not([hidden])').waitFor({ timeout: 8000 });
        await page.locator('[data-action="issues"]').click();
        await page.locator('#issues-panel tr[data-issue]').nth(2).waitFor({ timeout: 5000 });
      });
    });

    it(`the issues panel, a dead_letters issue expanded to its failed forwards, a source's to its refusals (${theme})`, async () => {
      await check(theme, '', async (page) => {
        await page.locator('[data-action="issues"]').click();
        await page.locator('#issues-panel tr[data-kind="dead_letters"] [data-action="expand-issue"]').click();
        await page.locator('#issues-panel tr.issue-history-row li[data-forward] a[data-delivery]').waitFor({ timeout: 5000 });
        await page.locator('#issues-panel tr[data-kind="verification_failing"] [data-action="expand-issue"]').click();
        await page.locator('#issues-panel [data-action="show-refusals"]').waitFor({ timeout: 5000 });
      });
    });

    it(`the refused view, a refusal opened (${theme})`, async () => {
      await check(theme, '', async (page) => {
        await page.locator('[data-action="refusals"]').click();
        const refusal = page.locator('#refusals-panel .refusal').first();
        await refusal.waitFor({ timeout: 5000 });
        await refusal.locator('summary').click();
        await refusal.locator('.headers-table').waitFor({ timeout: 5000 });
      });
    });
  }
});
