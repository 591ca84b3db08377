import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { launchChromium, skipBrowserTests } from '../helpers/browser.js';
import { startForwarding } from '../helpers/forwarding-app.js';
import { openPage } from '../helpers/page.js';
import { ensureWebBuilt } from '../helpers/web-build.js';

const LONG_PATH = 'http://127.0.0.1:8080/hooks/orders-and-invoices/incoming/from-reception/version-2/endpoint';
const LONG_HOST = 'https://the-receiving-service-of-the-accounting-team.internal.example.com:8443/in';

/** How a URL cell is drawn: its lines, where they break, and its scheme-host-port part. */
interface UrlLayout {
  text: string;
  title: string | null;
  lines: number;
  /** The text before each line break (its end). */
  breaksAfter: string[];
  originLines: number;
  originCut: boolean;
}

async function layoutOf(page: Page, name: string): Promise<UrlLayout> {
  return page.locator(`.destinations-table tr[data-destination="${name}"] td.url`).evaluate((cell) => {
    const doc = cell.ownerDocument;
    const tops: number[] = [];
    let text = '';
    const walker = doc.createTreeWalker(cell, 4 /* NodeFilter.SHOW_TEXT */);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const value = node.nodeValue ?? '';
      for (let i = 0; i < value.length; i++) {
        const range = doc.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        tops.push(range.getClientRects()[0]?.top ?? Number.NaN);
      }
      text += value;
    }
    const breaksAfter: string[] = [];
    for (let i = 1; i < tops.length; i++) {
      if ((tops[i] ?? 0) > (tops[i - 1] ?? 0) + 2) breaksAfter.push(text.slice(0, i));
    }
    const origin = cell.querySelector('.url-origin');
    return {
      text,
      title: cell.getAttribute('title'),
      lines: breaksAfter.length + 1,
      breaksAfter,
      originLines: origin?.getClientRects().length ?? 0,
      originCut: origin === null ? false : origin.scrollWidth > origin.clientWidth,
    };
  });
}

describe.skipIf(skipBrowserTests)('URLs in the destinations panel in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser;
  let server: RunningApp<InboxDatabase>;

  beforeAll(async () => {
    await ensureWebBuilt();
    browser = await launchChromium();
    server = await startForwarding('sqlite', {
      destinations: {
        deep: { url: LONG_PATH, allowPrivateNetwork: true },
        far: { url: LONG_HOST },
      },
      sources: { shop: { forward: [{ to: 'deep' }, { to: 'far' }] } },
    });
  }, 120_000);
  afterAll(async () => {
    await browser.close();
    await server.close();
  });

  for (const width of [1280, 760, 390]) {
    it(`never breaks "host:port", breaks a path only after a "/" and keeps the whole URL in a title (${width} px wide)`, async () => {
      const session = await openPage(browser, server, { viewport: { width, height: 800 } });
      try {
        const { page } = session;
        await page.locator('[data-action="destinations"]').click();
        await page.locator('.destinations-table tr[data-destination="far"]').waitFor({ timeout: 5000 });
        const deep = await layoutOf(page, 'deep');
        const far = await layoutOf(page, 'far');
        for (const [url, layout] of [
          [LONG_PATH, deep],
          [LONG_HOST, far],
        ] as const) {
          expect(layout.text).toBe(url);
          expect(layout.title).toBe(url);
          expect(layout.originLines).toBe(1);
          const origin = /^[a-z]+:\/\/[^/]*/.exec(url)?.[0] ?? '';
          for (const before of layout.breaksAfter) {
            expect(before === origin || before.endsWith('/'), `a break after "${before}"`).toBe(true);
            expect(before.length).toBeGreaterThanOrEqual(origin.length);
          }
        }
        // On a phone the long path takes several lines, and the long host is cut, not broken.
        if (width === 390) {
          expect(deep.lines).toBeGreaterThan(1);
          expect(far.originCut).toBe(true);
        }
      } finally {
        await session.close();
      }
    });
  }
});
