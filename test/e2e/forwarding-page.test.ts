import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { DestinationServer } from '../helpers/destination-server.js';

import { api, forwardsOf, send, startForwarding } from '../helpers/forwarding-app.js';

import { launchChromium, skipBrowserTests } from '../helpers/browser.js';

import { openPage, row, type PageSession } from '../helpers/page.js';

import { ensureWebBuilt } from '../helpers/web-build.js';

import { eventually } from '../helpers/eventually.js';

describe.skipIf(skipBrowserTests)('forwarding on the inbox page in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser;
  let destination: DestinationServer;
  let server: RunningApp<InboxDatabase>;
  let session: PageSession | undefined;

  beforeAll(async () => {
    await ensureWebBuilt();
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser.close();
  });

  beforeEach(async () => {
    destination = new DestinationServer();
    await destination.listen();
    server = await startForwarding('sqlite', {
      destinations: {
        app: { url: destination.url, allowPrivateNetwork: true, retry: { attempts: 2, initialMs: 10, maxMs: 20 } },
      },
      sources: { shop: { forward: [{ to: 'app' }] }, plain: {} },
    });
  });
  afterEach(async () => {
    if (session !== undefined) {
      // Nothing the forwarding views did may trip the CSP or log an error.
      expect(await session.violations()).toEqual([]);
      // The one 401 is the page asking, before the login, whether it is logged in.
      expect(session.consoleErrors.filter((e) => !e.includes('401'))).toEqual([]);
      await session.close();
      session = undefined;
    }
    await server.close();
    await destination.close();
  });

  const forward = (page: Page, status?: string) =>
    page.locator(`.forwards-section .forward[data-destination="app"]${status === undefined ? '' : `[data-status="${status}"]`}`);

  it('shows a delivery\'s forward with its attempts; "send again" makes a new attempt arrive at the destination', async () => {
    const id = await send(server, 'shop', '{"order":1}');
    await eventually(async () => (await forwardsOf(server, id))[0]?.status === 'succeeded');
    const plain = await send(server, 'plain', '{"n":1}');
    session = await openPage(browser, server, { hash: `#id=${id}` });
    const { page } = session;

    await forward(page, 'succeeded').waitFor({ timeout: 5000 });
    const attempts = forward(page).locator('.attempts-table tbody tr.attempt');
    expect(await attempts.count()).toBe(1);
    const cells = await attempts.first().locator('td').allTextContents();
    expect(cells[0]).toBe('1');
    expect(cells[2]).toBe('204');
    expect(cells[3]).toMatch(/^\d[\d,]* ms$/);
    expect(cells[4]).toBe('');
    expect(cells[5]).toBe('empty body');
    // The list's rows carry a badge from the delivery's forwards; a delivery forwarded nowhere has none.
    expect(await row(page, id).locator('.forward-badge').textContent()).toBe('forwarded');
    expect(await row(page, plain).locator('.forward-badge').count()).toBe(0);

    await page.locator('[data-action="send-again"][data-destination="app"]').click();
    await eventually(() => destination.requestsFor(id).length === 2);
    // A new forward, shown next to the first one once it has its attempt.
    await expect.poll(() => forward(page, 'succeeded').count(), { timeout: 5000 }).toBe(2);
    expect(destination.requestsFor(id).map((r) => r.body.toString())).toEqual(['{"order":1}', '{"order":1}']);
  });

  it('shows what the destination answered to each attempt, as text: an excerpt in its row, then its headers and body (a hostile body stays text)', async () => {
    const hostile = '<img src=x onerror="document.title=\'pwned\'"><b>database unavailable</b>';
    destination.answer = (_request, n) => ({
      status: 500,
      headers: { 'content-type': 'text/html', 'x-request-id': `req-${n}` },
      body: n === 1 ? '{"error":"first"}' : hostile,
    });
    const id = await send(server, 'shop', '{"order":3}');
    await eventually(async () => (await forwardsOf(server, id))[0]?.status === 'failed');
    session = await openPage(browser, server, { hash: `#id=${id}` });
    const { page } = session;
    await forward(page, 'failed').waitFor({ timeout: 5000 });
    const answers = forward(page).locator('.attempt-answer');
    expect(await answers.count()).toBe(2);
    // Each attempt's row has the start of the answer, as text; the whole of it opens on a click.
    expect(await forward(page).locator('tr.attempt[data-n="2"] .answer-excerpt').textContent()).toBe(hostile);
    const last = forward(page).locator('.attempt-answer[data-n="2"]');
    expect(await last.locator('.answer-body').isVisible()).toBe(false);
    await last.locator('summary').click();
    expect(await last.locator('.answer-body').isVisible()).toBe(true);
    expect(await last.locator('.answer-body').textContent()).toBe(hostile);
    expect(await last.locator('summary').textContent()).toContain('HTTP 500');
    const headers = await last.locator('.answer-headers tr').allTextContents();
    expect(headers).toContain('x-request-idreq-2');
    expect(await forward(page).locator('img, b').count()).toBe(0);
    expect(await page.title()).not.toBe('pwned');
    const first = forward(page).locator('.attempt-answer[data-n="1"]');
    expect(await first.locator('.answer-body').isVisible()).toBe(false);
    await first.locator('summary').click();
    expect(await first.locator('.answer-body').textContent()).toBe('{"error":"first"}');
    expect(await first.locator('.answer-body').isVisible()).toBe(true);
  });

  it('follows a forward live: pending while its destination is paused, succeeded after "Resume" in the destinations panel', async () => {
    session = await openPage(browser, server);
    const { page } = session;
    await page.locator('[data-action="destinations"]').click();
    const app = page.locator('.destinations-table tr[data-destination="app"]');
    await app.waitFor({ timeout: 5000 });
    await app.locator('[data-action="pause"]').click();
    await app.locator('[data-action="resume"]').waitFor({ timeout: 5000 });
    expect(await app.locator('.paused').textContent()).toBe('paused');
    expect((await api<{ items: Array<{ paused: boolean }> }>(server, '/api/destinations')).json.items[0]?.paused).toBe(true);

    const id = await send(server, 'shop', '{"order":2}');
    await row(page, id).waitFor({ timeout: 5000 });
    await expect.poll(() => app.locator('.pending').textContent(), { timeout: 5000 }).toBe('1');
    expect(await app.locator('.oldest time').textContent()).toMatch(/^\d+ s$/);
    expect(await row(page, id).locator('.forward-badge').getAttribute('data-state')).toBe('forwarding');
    await page.waitForTimeout(500);
    expect(destination.requests).toHaveLength(0);

    // The open delivery shows its waiting forward, then follows it without a reload.
    await page.locator('[data-action="close-destinations"]').click();
    await row(page, id).locator('a').click();
    await forward(page, 'pending').waitFor({ timeout: 5000 });
    expect(await forward(page).locator('.attempts-table').count()).toBe(0);
    await page.locator('[data-action="destinations"]').click();
    await app.locator('[data-action="resume"]').click();
    await eventually(() => destination.requestsFor(id).length === 1);
    await forward(page, 'succeeded').waitFor({ timeout: 5000 });
    await expect.poll(() => row(page, id).locator('.forward-badge').textContent(), { timeout: 5000 }).toBe('forwarded');
    await expect.poll(() => app.locator('.pending').textContent(), { timeout: 5000 }).toBe('0');
    expect(await app.locator('[data-action="pause"]').count()).toBe(1);
  });

  it('the destinations panel counts failed forwards and "Retry all failed" makes them succeed', async () => {
    destination.answer = () => ({ status: 500 });
    const ids = [await send(server, 'shop', '{"n":1}'), await send(server, 'shop', '{"n":2}')];
    await eventually(async () =>
      (await Promise.all(ids.map((id) => forwardsOf(server, id)))).every(([f]) => f?.status === 'failed'),
    );
    session = await openPage(browser, server);
    const { page } = session;
    expect(
      await row(page, ids[0] ?? '')
        .locator('.forward-badge')
        .textContent(),
    ).toBe('forward failed');
    await page.locator('[data-action="destinations"]').click();
    const app = page.locator('.destinations-table tr[data-destination="app"]');
    await app.waitFor({ timeout: 5000 });
    expect(await app.locator('.failed').textContent()).toBe('2');
    expect(await app.locator('.last-error').textContent()).toContain('HTTP 500');

    destination.answer = () => ({ status: 200 });
    await app.locator('[data-action="retry-failed"]').click();
    await expect.poll(() => app.locator('.failed').textContent(), { timeout: 5000 }).toBe('0');
    await eventually(async () =>
      (await Promise.all(ids.map((id) => forwardsOf(server, id)))).every(([f]) => f?.status === 'succeeded'),
    );
    for (const id of ids)
      expect(destination.requestsFor(id).map((r) => r.headers['x-reception-attempt'])).toEqual(['1', '2', '3']);
    expect(await app.locator('[data-action="retry-failed"]').count()).toBe(0);
    await expect
      .poll(
        () =>
          row(page, ids[0] ?? '')
            .locator('.forward-badge')
            .textContent(),
        { timeout: 5000 },
      )
      .toBe('forwarded');
  });

  it("shows a destination's circuit: closed, then open in red with until when", async () => {
    await server.close();
    server = await startForwarding('sqlite', {
      destinations: {
        app: {
          url: destination.url,
          allowPrivateNetwork: true,
          retry: { attempts: 2, initialMs: 10, maxMs: 20 },
          breaker: { failures: 3, cooldownSeconds: 120 },
        },
      },
      sources: { shop: { forward: [{ to: 'app' }] } },
    });
    session = await openPage(browser, server);
    const { page } = session;
    await page.locator('[data-action="destinations"]').click();
    const circuit = page.locator('.destinations-table tr[data-destination="app"] td.circuit');
    await circuit.waitFor({ timeout: 5000 });
    expect(await circuit.getAttribute('data-circuit')).toBe('closed');
    expect(await circuit.textContent()).toBe('closed');
    destination.answer = () => ({ status: 500 });
    await send(server, 'shop', '{"n":1}');
    await send(server, 'shop', '{"n":2}');
    await expect.poll(() => circuit.getAttribute('data-circuit'), { timeout: 8000 }).toBe('open');
    expect(await circuit.getAttribute('class')).toContain('bad');
    expect(await circuit.textContent()).toMatch(/^open until .+3 failed in a row; nothing is sent meanwhile$/);
    const until = (await api<{ items: Array<{ circuit: { until: string } }> }>(server, '/api/destinations')).json.items[0]
      ?.circuit.until;
    expect(await circuit.locator('time').getAttribute('datetime')).toBe(until);
  });

  it('stops polling while the panel is closed and the tab is hidden', async () => {
    session = await openPage(browser, server);
    const { page } = session;
    const polls = (): number => session?.requests.filter((url) => url.endsWith('/api/destinations')).length ?? 0;
    await page.locator('[data-action="destinations"]').click();
    await expect.poll(polls, { timeout: 6000 }).toBeGreaterThanOrEqual(2);
    await page.locator('[data-action="close-destinations"]').click();
    const closed = polls();
    await page.waitForTimeout(2500);
    expect(polls()).toBe(closed);

    await page.locator('[data-action="destinations"]').click();
    await expect.poll(polls).toBeGreaterThan(closed);
    // A hidden tab: the browser says so through the Page Visibility API.
    await page.evaluate(`Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'))`);
    await page.waitForTimeout(2200);
    const hidden = polls();
    await page.waitForTimeout(2500);
    expect(polls()).toBe(hidden);
    await page.evaluate(`Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'))`);
    await expect.poll(polls).toBeGreaterThan(hidden);
  });
});
