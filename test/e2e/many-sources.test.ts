import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RunningApp } from '../helpers/app.js';
import { newDelivery } from '../helpers/delivery-factory.js';
import { skipBrowserTests, useBrowserAndServer } from '../helpers/browser.js';
import { openPage, sendWebhook, type PageSession } from '../helpers/page.js';

const SOURCES = 5000;
const name = (i: number): string => `src-${String(i).padStart(5, '0')}`;

/** Every node (elements, text) under the sources panel. */
async function panelNodes(page: Page): Promise<number> {
  return (await page.evaluate(`(() => {
    const walker = document.createTreeWalker(document.querySelector('nav.sources'));
    let count = 0;
    while (walker.nextNode() !== null) count++;
    return count;
  })()`)) as number;
}

function shownSources(page: Page): Promise<string[]> {
  return page
    .locator('.source-list .source[data-source]')
    .evaluateAll((links) => links.map((a) => a.getAttribute('data-source') ?? ''));
}

const sourcesRequests = (session: PageSession): number =>
  session.requests.filter((url) => new URL(url).pathname === '/api/sources').length;

/** Issue 16: 50,000 sources made the page 250,000 DOM nodes and blocked it for seconds. */
describe.skipIf(skipBrowserTests)('the sources panel with thousands of sources', () => {
  let browser: Browser;
  let server: RunningApp;
  useBrowserAndServer((b, s) => {
    browser = b;
    server = s;
  });

  async function fill(): Promise<void> {
    // Straight into the server's real store, 500 per transaction: the page then reads them through the API.
    for (let i = 0; i < SOURCES; i += 500) {
      await server.store.append(
        Array.from({ length: 500 }, (_, k) => newDelivery({ source: name(i + k), receivedAt: Date.now() - 60_000 })),
      );
    }
  }

  it('stays small, finds a source by search, and counts arrivals without fetching the sources again', async () => {
    await fill();
    const session = await openPage(browser, server);
    const { page } = session;
    await expect.poll(() => shownSources(page)).toHaveLength(100);
    expect((await shownSources(page)).slice(0, 3)).toEqual([name(0), name(1), name(2)]);
    const first = await panelNodes(page);
    // A row is about ten nodes, three of them its sparkline (the last 24 hours).
    expect(first).toBeLessThan(1400);

    // "Show more" pages on by name, up to 200 rows; then the search is the way.
    await page.locator('[data-action="more-sources"]').click();
    await expect.poll(() => shownSources(page)).toHaveLength(200);
    expect(await shownSources(page)).toEqual(Array.from({ length: 200 }, (_, i) => name(i)));
    expect(await page.locator('[data-action="more-sources"]').count()).toBe(0);
    expect(await page.locator('.sources-footer').textContent()).toContain('search to find the others');
    const most = await panelNodes(page);
    expect(most).toBeLessThan(2700);

    // The search asks the server; the box's text is matched ignoring case.
    await page.getByLabel('Search sources').fill('SRC-0432');
    await expect.poll(() => shownSources(page)).toEqual(Array.from({ length: 10 }, (_, i) => name(4320 + i)));
    await page.getByLabel('Search sources').fill('src-04321');
    await expect.poll(() => shownSources(page)).toEqual([name(4321)]);
    await page.locator(`.source[data-source="${name(4321)}"]`).click();
    await expect.poll(() => page.locator('.pane-title').nth(1).textContent()).toBe(`From ${name(4321)}`);
    await page.getByLabel('Search sources').fill('no such source');
    await expect.poll(() => page.locator('.sources-footer').textContent()).toBe('No source name contains that.');
    // The source the list is filtered by stays in view, pinned under "All sources".
    expect(await shownSources(page)).toEqual([name(4321)]);
    await page.getByLabel('Search sources').fill('');
    await expect.poll(() => shownSources(page)).toHaveLength(101);

    // Arrivals change counts in place and insert a new name where it belongs: no /api/sources request.
    const before = sourcesRequests(session);
    await sendWebhook(server, name(2), '{"n":2}');
    await sendWebhook(server, name(2), '{"n":3}');
    await sendWebhook(server, `${name(1)}a`, '{"new":true}');
    await sendWebhook(server, name(4999), '{"far":"out of view"}');
    const count = page.locator(`.source[data-source="${name(2)}"] .source-count`);
    await expect.poll(() => count.textContent()).toBe('3');
    expect(await page.locator(`.source[data-source="${name(2)}"] .source-seen`).textContent()).toMatch(/just now|s ago/);
    await expect
      .poll(async () => (await shownSources(page)).slice(0, 5))
      .toEqual([name(4321), name(0), name(1), `${name(1)}a`, name(2)]);
    expect(await page.locator(`.source[data-source="${name(1)}a"] .source-count`).textContent()).toBe('1');
    expect(await page.locator(`.source[data-source="${name(4999)}"]`).count()).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(sourcesRequests(session)).toBe(before);
    await session.close();
  });

  it('stays responsive while deliveries to a thousand new sources pour in, and keeps at most 200 rows', async () => {
    const session = await openPage(browser, server);
    const { page } = session;
    await expect.poll(() => shownSources(page)).toHaveLength(100);
    await page.evaluate(`(() => {
      window.longest = 0;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) window.longest = Math.max(window.longest, entry.duration);
      }).observe({ type: 'longtask' });
    })()`);
    const before = sourcesRequests(session);
    // Names that sort before every other one: each arrival lands in view, and the last rows make room.
    for (let i = 0; i < 1000; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, k) => sendWebhook(server, `new-${String(i + k).padStart(4, '0')}`, '{}')));
    }
    await expect.poll(async () => (await shownSources(page))[0], { timeout: 10_000 }).toBe('new-0000');
    await expect
      .poll(async () => page.locator('.delivery-list li').first().locator('.row-source').textContent(), { timeout: 10_000 })
      .toBe('new-0999');
    expect(await shownSources(page)).toHaveLength(200);
    expect(await panelNodes(page)).toBeLessThan(2700);
    expect(sourcesRequests(session)).toBe(before);
    const longest = (await page.evaluate('window.longest')) as number;
    // Seconds with the old page (it fetched and redrew every source twice a second); a bound that a slow machine still meets.
    expect(longest).toBeLessThan(1000);
    // "Show more" goes on from the last row kept.
    await page.locator('.sources').evaluate((panel) => panel.scrollTo(0, panel.scrollHeight));
    expect(await page.locator('[data-action="more-sources"]').count()).toBe(0);
    await page.getByLabel('Search sources').fill('new-09');
    await expect.poll(() => shownSources(page)).toHaveLength(100);
    await session.close();
  });
});
