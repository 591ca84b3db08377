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

/** How many refusal lines the sparkline of a source draws. */
function refusalLines(page: Page, source: string): Promise<number> {
  return page.locator(`.source-list a[data-source="${source}"] svg.sparkline .spark-refused`).count();
}

interface Tick {
  text: string;
  value: string | null;
  time: string | null;
  box: { left: number; right: number; top: number; bottom: number };
}

/** The labels of one of the chart's scales (`.traffic-y` counts, `.traffic-x` times), with where they are drawn. */
function ticks(page: Page, axis: '.traffic-y' | '.traffic-x'): Promise<Tick[]> {
  return page.locator(`.traffic-chart ${axis} .traffic-tick`).evaluateAll((labels) =>
    labels.map((label) => {
      const rect = label.getBoundingClientRect();
      return {
        text: label.textContent ?? '',
        value: label.getAttribute('data-value'),
        time: label.getAttribute('data-time'),
        box: { left: rect.left, right: rect.right, top: rect.top, bottom: rect.bottom },
      };
    }),
  );
}

/** No two labels overlap, and each has a size. */
function apart(boxes: Tick['box'][]): boolean {
  return boxes.every(
    (a, i) =>
      a.right > a.left &&
      a.bottom > a.top &&
      boxes.slice(i + 1).every((b) => a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top),
  );
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
    // The refusal line only for a source with refusals: no red line along the bottom for the others.
    expect(await refusalLines(page, 'shop')).toBe(1);
    expect(await refusalLines(page, 'other')).toBe(0);
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
    expect(await refusalLines(page, 'fresh')).toBe(0);
    await refuse(server, 'shop');
    await server.app.refusals.flush();
    await page.locator('.traffic-switch [data-range="24h"]').click();
    await expect.poll(() => legend(page), { timeout: 5000 }).toMatchObject({ delivered: '4', refused: '3' });
    expect(await page.locator('.traffic-chart svg.traffic-svg').getAttribute('aria-label')).toContain(
      'the last 24 hours, by hour',
    );
    expect(await page.locator('.traffic-switch [data-range="24h"]').getAttribute('aria-pressed')).toBe('true');
  });

  it('draws a count scale and a time axis that cover the data, with readable labels', async () => {
    for (let i = 0; i < 7; i++) await sendWebhook(server, 'scaled', `{"n":${i}}`);
    session = await openPage(browser, server, { hash: '#source=scaled', viewport: { width: 1100, height: 800 } });
    const { page } = session;

    for (const view of [
      { range: '1h', bucket: 'minute', everyMinutes: 15 },
      { range: '24h', bucket: 'hour', everyMinutes: 360 },
    ] as const) {
      await page.locator(`.traffic-switch [data-range="${view.range}"]`).click();
      const response = await fetch(`${server.url}/api/sources/scaled/traffic?range=${view.range}&bucket=${view.bucket}`, {
        headers: server.auth,
      });
      const data = (await response.json()) as Record<
        'delivered' | 'refused' | 'forwarded' | 'forwardFailed' | 'dead',
        number[]
      > & {
        from: string;
        bucketSeconds: number;
      };
      const max = Math.max(...data.delivered, ...data.refused, ...data.forwarded, ...data.forwardFailed, ...data.dead);
      expect(max).toBeGreaterThan(0);
      await expect
        .poll(async () => (await page.locator('.traffic-chart svg.traffic-svg').getAttribute('aria-label')) ?? '', {
          timeout: 5000,
        })
        .toContain(`by ${view.bucket}`);

      // Counts: from 0 up to a round number at or above the highest count, the step before it below it.
      const counts = await ticks(page, '.traffic-y');
      const values = counts.map((t) => Number(t.value));
      expect(values[0]).toBe(0);
      expect(values.at(-1)).toBeGreaterThanOrEqual(max);
      expect(values.at(-2) ?? -1).toBeLessThan(max);
      expect(counts.map((t) => t.text)).toEqual(values.map((v) => v.toLocaleString('en-US')));
      // Drawn from the bottom up.
      expect(counts.map((t) => t.box.top)).toEqual([...counts.map((t) => t.box.top)].sort((a, b) => b - a));
      expect(apart(counts.map((t) => t.box))).toBe(true);

      // Times: round ones, in order, within the first and the last bucket, left to right, apart, inside the chart.
      const times = await ticks(page, '.traffic-x');
      expect(times.length).toBeGreaterThanOrEqual(3);
      const from = Date.parse(data.from);
      const last = from + data.bucketSeconds * 1000 * (data.delivered.length - 1);
      const at = times.map((t) => Date.parse(t.time ?? ''));
      expect(at).toEqual([...at].sort((a, b) => a - b));
      expect(at[0]).toBeGreaterThanOrEqual(from);
      expect(at.at(-1)).toBeLessThanOrEqual(last);
      for (const [i, tick] of times.entries()) {
        expect(tick.text).toMatch(/^\d\d:\d\d$/);
        const [hours, minutes] = tick.text.split(':').map(Number);
        // The browser runs in this process's time zone: the label is the tick's local time, a multiple of the step.
        const local = new Date(at[i] ?? 0);
        expect([hours, minutes]).toEqual([local.getHours(), local.getMinutes()]);
        expect(((hours ?? 0) * 60 + (minutes ?? 0)) % view.everyMinutes).toBe(0);
      }
      const chart = await page.locator('.traffic-chart svg.traffic-svg').boundingBox();
      expect(times[0]?.box.left).toBeGreaterThanOrEqual((chart?.x ?? 0) - 1);
      expect(times.at(-1)?.box.right).toBeLessThanOrEqual((chart?.x ?? 0) + (chart?.width ?? 0) + 1);
      expect(apart(times.map((t) => t.box))).toBe(true);
    }
  });
});
