import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { redisStreams, REDIS_URL, requireBroker } from '../helpers/brokers.js';
import { freePort } from '../helpers/free-port.js';
import { startForwarding } from '../helpers/forwarding-app.js';
import { launchChromium, skipBrowserTests } from '../helpers/browser.js';
import { openPage, type PageSession } from '../helpers/page.js';
import { ensureWebBuilt } from '../helpers/web-build.js';

/** The Destinations panel shows a broker destination's connection: connected, or its state and why (CONTRACT 7). */
describe.skipIf(skipBrowserTests)('broker destinations on the inbox page in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser;
  let server: RunningApp<InboxDatabase> | undefined;
  let session: PageSession | undefined;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    await ensureWebBuilt();
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser.close();
  });
  afterEach(async () => {
    if (session !== undefined) {
      expect(await session.violations()).toEqual([]);
      expect(session.consoleErrors.filter((e) => !e.includes('401'))).toEqual([]);
      await session.close();
      session = undefined;
    }
    await server?.close();
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('shows "connected" under a broker that answers, and the state and error of one that does not', async () => {
    if (!(await requireBroker('redis', 'broker page tests'))) return;
    const redis = await redisStreams();
    cleanups.push(() => redis.remove());
    // Nothing listens on this port: the connection is refused.
    const closed = await freePort();
    server = await startForwarding('sqlite', {
      destinations: {
        stream: { redis: { url: REDIS_URL, stream: `${redis.prefix}{source}` }, allowPrivateNetwork: true },
        bus: { nats: { url: `nats://127.0.0.1:${closed}`, subject: 'webhooks.{source}' }, allowPrivateNetwork: true },
      },
      sources: { shop: { forward: [{ to: 'stream' }, { to: 'bus' }] } },
    });
    session = await openPage(browser, server);
    const { page } = session;
    await page.locator('[data-action="destinations"]').click();
    const stream = page.locator('.destinations-table tr[data-destination="stream"]');
    const bus = page.locator('.destinations-table tr[data-destination="bus"]');
    await stream.locator('[data-connection="connected"]').waitFor({ timeout: 10_000 });
    expect(await stream.locator('.kind').textContent()).toBe('redisconnected');
    expect(await stream.locator('.url').textContent()).toBe('redis://127.0.0.1:6379');
    await expect
      .poll(() => bus.locator('[data-connection]').textContent(), { timeout: 10_000 })
      .toMatch(/^(disconnected|connecting): .*(ECONNREFUSED|refused)/);
    if (process.env.RECEPTION_SCREENSHOT_DIR !== undefined) {
      await page.screenshot({ path: `${process.env.RECEPTION_SCREENSHOT_DIR}/broker-destinations.png` });
    }
  });
});
