import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { launchChromium, skipBrowserTests } from '../helpers/browser.js';
import { openPage, sendWebhook, type PageSession } from '../helpers/page.js';
import { ensureWebBuilt } from '../helpers/web-build.js';

/** Posts a body that is not JSON to a source: a 400 invalid_json refusal. */
async function refuse(server: RunningApp, source: string): Promise<void> {
  const response = await fetch(`${server.url}/api/webhook/${source}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: 'not json',
  });
  expect(response.status).toBe(400);
}

/** The sparkline of a source in the sources panel: its totals and its accessible name. */
async function spark(
  page: Page,
  source: string,
): Promise<{ delivered: string | null; refused: string | null; label: string | null }> {
  const picture = page.locator(`.source-list a[data-source="${source}"] svg.sparkline`);
  return {
    delivered: await picture.getAttribute('data-delivered'),
    refused: await picture.getAttribute('data-refused'),
    label: await picture.getAttribute('aria-label'),
  };
}

/** The chart's legend: each series' total. */
async function legend(page: Page): Promise<Record<string, string>> {
  return page
    .locator('.traffic-chart .traffic-key')
    .evaluateAll((items) =>
      Object.fromEntries(
        items.map((item) => [item.getAttribute('data-series') ?? '', item.querySelector('.traffic-total')?.textContent ?? '']),
      ),
    );
}

describe.skipIf(skipBrowserTests)('the traffic pictures on the inbox page in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser;
  let server: RunningApp;
  let session: PageSession | undefined;

  beforeAll(async () => {
    await ensureWebBuilt();
    browser = await launchChromium();
    server = await startApp({ refusalWriter: { intervalMs: 20 } });
  }, 120_000);
  afterAll(async () => {
    await browser.close();
    await server.close();
  });
  afterEach(async () => {
    if (session !== undefined) {
      expect(await session.violations()).toEqual([]);
      expect(session.consoleErrors.filter((e) => !e.includes('401'))).toEqual([]);
      await session.close();
      session = undefined;
    }
  });

  it("draws each source's last 24 hours in the panel and a source's chart, with their numbers, and follows new deliveries live", async () => {
    for (let i = 0; i < 3; i++) await sendWebhook(server, 'shop', `{"n":${i}}`);
    await sendWebhook(server, 'other', '{"n":9}');
    await refuse(server, 'shop');
    await refuse(server, 'shop');
    await server.app.refusals.flush();

    session = await openPage(browser, server);
    const { page } = session;
    await page.locator('.source-list a[data-source="shop"] svg.sparkline').waitFor({ timeout: 5000 });
    expect(await spark(page, 'shop')).toEqual({
      delivered: '3',
      refused: '2',
      label: 'Last 24 hours: 3 delivered, 2 refused',
    });
    expect(await spark(page, 'other')).toMatchObject({ delivered: '1', refused: '0' });
    // No chart for all sources.
    expect(await page.locator('.traffic-chart').isHidden()).toBe(true);

    await page.locator('.source-list a[data-source="shop"]').click();
    await page.locator('.traffic-chart .traffic-key').first().waitFor({ timeout: 5000 });
    expect(await legend(page)).toEqual({ delivered: '3', refused: '2', forwarded: '0', forwardFailed: '0', dead: '0' });
    const label = await page.locator('.traffic-chart svg.traffic-svg').getAttribute('aria-label');
    expect(label).toContain('the last hour, by minute');
    expect(label).toContain('3 delivered, 2 refused, 0 forwarded');

    // Live: a delivery shows at once in both; a refusal by the chart's next read (asked for here by switching view).
    await sendWebhook(server, 'shop', '{"n":3}');
    await expect.poll(() => spark(page, 'shop'), { timeout: 5000 }).toMatchObject({ delivered: '4' });
    await expect.poll(() => legend(page), { timeout: 5000 }).toMatchObject({ delivered: '4' });
    // A source first seen on the live stream gets its sparkline with it.
    await sendWebhook(server, 'fresh', '{"n":1}');
    await expect.poll(() => spark(page, 'fresh'), { timeout: 5000 }).toMatchObject({ delivered: '1', refused: '0' });
    await refuse(server, 'shop');
    await server.app.refusals.flush();
    await page.locator('.traffic-switch [data-range="24h"]').click();
    await expect.poll(() => legend(page), { timeout: 5000 }).toMatchObject({ delivered: '4', refused: '3' });
    expect(await page.locator('.traffic-chart svg.traffic-svg').getAttribute('aria-label')).toContain(
      'the last 24 hours, by hour',
    );
    expect(await page.locator('.traffic-switch [data-range="24h"]').getAttribute('aria-pressed')).toBe('true');
  });
});
