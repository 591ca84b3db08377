import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { launchChromium, skipBrowserTests } from '../helpers/browser.js';
import { DestinationServer } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import { api, forwardsOf, send, startForwarding } from '../helpers/forwarding-app.js';
import { transformDefinitions, transformUsers } from '../../src/config/transform-config.js';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import { openPage, row, type PageSession } from '../helpers/page.js';
import { ensureWebBuilt } from '../helpers/web-build.js';

/** An ISO UTC time as the API writes it, somewhere in a text. */
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/;

/**
 * Issue 31 part 5: debugging a dead letter from a delivery's detail (retry
 * it, see what the destination answered, when) and the list's badge
 * following the latest outcome.
 */
describe.skipIf(skipBrowserTests)('a dead letter in the detail, in Chromium', { timeout: 60_000 }, () => {
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
      sources: { shop: { forward: [{ to: 'app' }] } },
    });
  });
  afterEach(async () => {
    if (session !== undefined) {
      expect(await session.violations()).toEqual([]);
      expect(session.consoleErrors.filter((e) => !e.includes('401'))).toEqual([]);
      await session.close();
      session = undefined;
    }
    await server.close();
    await destination.close();
  });

  const forward = (page: Page, status?: string) =>
    page.locator(`.forwards-section .forward[data-destination="app"]${status === undefined ? '' : `[data-status="${status}"]`}`);

  /** A delivery to `shop` whose one forward to `app` is a dead letter (two 500s). */
  async function deadLetter(body = '{"type":"order.paid","n":1}'): Promise<string> {
    destination.answer = () => ({ status: 500, body: 'database unavailable' });
    const id = await send(server, 'shop', body);
    await eventually(async () => (await forwardsOf(server, id))[0]?.status === 'failed');
    return id;
  }

  const badge = (page: Page, id: string) => row(page, id).locator('.forward-badge');

  it('"Retry" on a failed forward retries that forward (no new one); it goes on to succeed, and the badge follows', async () => {
    const id = await deadLetter();
    const [failed] = await forwardsOf(server, id);
    session = await openPage(browser, server, { hash: `#id=${id}` });
    const { page } = session;
    await forward(page, 'failed').waitFor({ timeout: 5000 });
    expect(await badge(page, id).textContent()).toBe('forward failed');

    const retry = forward(page, 'failed').getByRole('button', { name: 'Retry the forward to app', exact: true });
    expect(await retry.count()).toBe(1);
    destination.answer = () => ({ status: 200, body: 'ok' });
    await retry.click();
    await forward(page, 'succeeded').waitFor({ timeout: 5000 });
    // The same forward, retried with a fresh budget (CONTRACT 6): attempt numbers go on counting.
    expect(await forward(page).getAttribute('data-forward-id')).toBe(failed?.id);
    expect(await forward(page).count()).toBe(1);
    expect(destination.requestsFor(id).map((r) => r.headers['x-reception-attempt'])).toEqual(['1', '2', '3']);
    expect(await forward(page).getByRole('button', { name: 'Retry the forward to app', exact: true }).count()).toBe(0);
    await expect.poll(() => badge(page, id).textContent(), { timeout: 5000 }).toBe('forwarded');
  });

  it('the badge follows the latest forward to each destination: "Send again" that succeeded clears "forward failed"', async () => {
    const id = await deadLetter();
    session = await openPage(browser, server, { hash: `#id=${id}` });
    const { page } = session;
    await forward(page, 'failed').waitFor({ timeout: 5000 });
    destination.answer = () => ({ status: 204 });
    await page.locator('[data-action="send-again"][data-destination="app"]').click();
    await forward(page, 'succeeded').waitFor({ timeout: 5000 });
    // The old forward stays failed (and can still be retried), but it is not the latest.
    expect(await forward(page, 'failed').count()).toBe(1);
    await expect.poll(() => badge(page, id).textContent(), { timeout: 5000 }).toBe('forwarded');
    expect(await badge(page, id).getAttribute('title')).toBe('Forwards: app: succeeded');

    // A fresh page reads the same from the delivery's JSON (both forwards, the older first).
    await page.reload();
    await badge(page, id).waitFor({ timeout: 5000 });
    expect(await badge(page, id).textContent()).toBe('forwarded');
  });

  it('the list alone (no detail open) follows a "send again" from elsewhere: the badge turns from failed to forwarded', async () => {
    const id = await deadLetter();
    session = await openPage(browser, server);
    const { page } = session;
    await badge(page, id).waitFor({ timeout: 5000 });
    expect(await badge(page, id).textContent()).toBe('forward failed');
    destination.answer = () => ({ status: 204 });
    const again = await api(server, `/api/deliveries/${id}/forward`, { method: 'POST', body: { destination: 'app' } });
    expect(again.status).toBe(201);
    await eventually(async () => (await forwardsOf(server, id)).at(-1)?.status === 'succeeded');
    await expect.poll(() => badge(page, id).textContent(), { timeout: 8000 }).toBe('forwarded');
  });

  it('the list follows a retry of a dead letter older than the 200 newest forwards (its row reads its own forwards)', async () => {
    const id = await deadLetter('{"type":"order.failed"}');
    destination.answer = () => ({ status: 204 });
    for (let n = 0; n < 201; n++) await send(server, 'shop', `{"type":"order.other","n":${n}}`);
    session = await openPage(browser, server, { hash: '#source=shop&eventType=order.failed' });
    const { page } = session;
    await badge(page, id).waitFor({ timeout: 5000 });
    expect(await badge(page, id).textContent()).toBe('forward failed');
    const retried = await api<{ retried: number }>(server, '/api/forwards/retry', {
      method: 'POST',
      body: { status: 'failed', destination: 'app' },
    });
    expect(retried.json.retried).toBe(1);
    await eventually(async () => (await forwardsOf(server, id))[0]?.status === 'succeeded');
    await expect.poll(() => badge(page, id).textContent(), { timeout: 8000 }).toBe('forwarded');
  });

  it("shows each attempt's answer in the attempts table (status and excerpt, the long one in full on demand) and absolute times", async () => {
    const long = `upstream error: ${'x'.repeat(400)} END`;
    destination.answer = (_request, n) => ({ status: n === 1 ? 502 : 500, body: n === 1 ? long : 'short answer' });
    const id = await send(server, 'shop', '{"type":"order.paid"}');
    await eventually(async () => (await forwardsOf(server, id))[0]?.status === 'failed');
    const [stored] = await forwardsOf(server, id);
    session = await openPage(browser, server, { hash: `#id=${id}` });
    const { page } = session;
    await forward(page, 'failed').waitFor({ timeout: 5000 });

    const attempt = (n: number) => forward(page).locator(`.attempts-table tr.attempt[data-n="${n}"]`);
    expect(await attempt(1).locator('td.status').textContent()).toBe('502');
    expect(await attempt(2).locator('td.status').textContent()).toBe('500');
    // The excerpt: the short answer whole, the long one cut, with all of it one click away.
    expect(await attempt(2).locator('.answer-excerpt').textContent()).toBe('short answer');
    const excerpt = (await attempt(1).locator('.answer-excerpt').textContent()) ?? '';
    expect(excerpt.startsWith('upstream error: xxx')).toBe(true);
    expect(excerpt.endsWith('…')).toBe(true);
    expect(excerpt.length).toBeLessThan(200);
    const full = forward(page).locator('details.attempt-answer[data-n="1"]');
    expect(await full.locator('.answer-body').isVisible()).toBe(false);
    await full.locator('summary').click();
    expect(await full.locator('.answer-body').textContent()).toBe(long);

    // When each attempt started: the absolute time, its ISO UTC value on hover.
    for (const [n, a] of (stored?.attempts ?? []).entries()) {
      const time = attempt(n + 1).locator('td.started time');
      const text = (await time.textContent()) ?? '';
      expect(text).not.toMatch(/ago|just now/);
      expect(text).toMatch(/\d\d:\d\d:\d\d/);
      expect(await time.getAttribute('title')).toContain(a.startedAt);
    }
  });

  it('shows the transform that ran for each attempt as name@version, and no Transform column where none ran', async () => {
    await server.close();
    const file: ConfigFile = {
      destinations: {
        app: { url: destination.url, allowPrivateNetwork: true },
        chat: { url: destination.url, allowPrivateNetwork: true },
      },
      transforms: { tag: { code: 'export default (e) => ({ body: { tagged: e.body.type } })' } },
      sources: { shop: { forward: [{ to: 'app' }, { to: 'chat', transform: 'tag' }] } },
    };
    server = await startForwarding('sqlite', file, {
      transforms: { definitions: transformDefinitions(file), users: transformUsers(file) },
    });
    const id = await send(server, 'shop', '{"type":"order.paid"}');
    await eventually(async () => (await forwardsOf(server, id)).every((f) => f.status === 'succeeded'));
    const version = (await forwardsOf(server, id)).find((f) => f.destination === 'chat')?.attempts[0]?.transform?.version;
    expect(version).toMatch(/^[0-9a-f]{12}$/);
    session = await openPage(browser, server, { hash: `#id=${id}` });
    const { page } = session;
    const chat = page.locator('.forwards-section .forward[data-destination="chat"]');
    await chat.locator('.attempts-table tr.attempt[data-n="1"]').waitFor({ timeout: 5000 });
    expect(await chat.locator('.attempts-table th').allTextContents()).toContain('Transform');
    expect(await chat.locator('tr.attempt[data-n="1"] td.transform').textContent()).toBe(`tag@${version ?? ''}`);
    expect(await forward(page).locator('.attempts-table th').allTextContents()).not.toContain('Transform');
  });

  it('every relative time says the absolute one on hover: local with seconds, and the ISO UTC value', async () => {
    const id = await deadLetter();
    session = await openPage(browser, server, { hash: `#id=${id}` });
    const { page } = session;
    await forward(page, 'failed').waitFor({ timeout: 5000 });
    await page.locator('.source-seen').first().waitFor({ timeout: 5000 });
    // Every element whose own text is a relative time, with its title.
    const relative = (await page.evaluate(`[...document.querySelectorAll('body *')]
      .filter((el) => el.children.length === 0 && /(\\bago|just now)$/.test(el.textContent ?? ''))
      .map((el) => ({ text: el.textContent ?? '', title: el.title, cls: el.className }))`)) as Array<{
      text: string;
      title: string;
      cls: string;
    }>;
    // The row, the detail's summary, the source's last delivery.
    expect(relative.length).toBeGreaterThanOrEqual(3);
    for (const r of relative) {
      expect(r.title, `${r.cls}: ${r.text}`).toMatch(ISO);
      expect(r.title, `${r.cls}: ${r.text}`).toMatch(/\d\d:\d\d:\d\d/);
    }
  });

  it('the detail: the event type in its header, the body right under the summary, before the facts, forwards and headers', async () => {
    const id = await deadLetter('{"type":"order.paid","n":2}');
    session = await openPage(browser, server, { hash: `#id=${id}` });
    const { page } = session;
    await forward(page, 'failed').waitFor({ timeout: 5000 });
    expect(await page.locator('.detail-head .detail-event-type').textContent()).toBe('order.paid');
    const order = await page
      .locator('.detail > section, .detail > dl')
      .evaluateAll((parts) =>
        parts.filter((p) => !p.hasAttribute('hidden')).map((p) => p.getAttribute('aria-label') ?? p.tagName.toLowerCase()),
      );
    // (The "Try a transform" section, after the forwards, stays hidden here: no route of this source has a transform.)
    expect(order).toEqual(['Body', 'dl', 'Forwards', 'Headers']);
  });

  it('at phone width, the attempts table stacks instead of breaking words letter by letter; a source shows its first delivery above the fold', async () => {
    destination.answer = () => ({ status: 500, body: 'database unavailable, try again later' });
    const id = await send(server, 'shop', '{"type":"order.paid"}');
    await eventually(async () => (await forwardsOf(server, id))[0]?.status === 'failed');
    session = await openPage(browser, server, { hash: `#id=${id}`, viewport: { width: 390, height: 844 } });
    const { page } = session;
    await forward(page, 'failed').waitFor({ timeout: 5000 });
    // Each cell's text, width and how many lines it takes.
    const cells = (await page.evaluate(`[...document.querySelectorAll('.forward .attempts-table tr.attempt td')].map((td) => {
      const range = document.createRange();
      range.selectNodeContents(td);
      const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      return { text: (td.textContent ?? '').trim(), width: td.getBoundingClientRect().width, lines };
    })`)) as Array<{ text: string; width: number; lines: number }>;
    expect(cells.length).toBeGreaterThan(0);
    for (const cell of cells.filter((c) => c.text !== '')) {
      // No column squeezed to a letter or two: every cell has room for words.
      expect(cell.width, cell.text).toBeGreaterThan(120);
      const words = cell.text.split(/\s+/).length;
      expect(cell.lines, cell.text).toBeLessThanOrEqual(words);
    }
    // Nothing wider than the phone.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);

    // A source's view on a phone, under the sources, its event types, the filters and the traffic chart.
    for (const other of ['github', 'stripe', 'slack', 'twilio', 'paddle', 'mailgun', 'linear', 'sentry'])
      await send(server, other, '{"type":"ping"}');
    for (const type of ['order.created', 'order.updated', 'refund.issued', 'customer.deleted'])
      await send(server, 'shop', JSON.stringify({ type }));
    await page.goto(`/#source=shop`);
    await page.locator('.traffic-svg').waitFor({ timeout: 5000 });
    const first = page.locator('.delivery-list li').first();
    await first.waitFor({ timeout: 5000 });
    const box = await first.boundingBox();
    expect(box).not.toBeNull();
    expect((box?.y ?? 0) + (box?.height ?? 0)).toBeLessThanOrEqual(844);
  });
});
