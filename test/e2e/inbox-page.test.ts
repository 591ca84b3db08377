import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { skipBrowserTests, useBrowserAndServer } from '../helpers/browser.js';
import { openPage, row, sendWebhook } from '../helpers/page.js';

describe.skipIf(skipBrowserTests)('the inbox page in Chromium', () => {
  let browser: Browser;
  let server: RunningApp;
  useBrowserAndServer((b, s) => {
    browser = b;
    server = s;
  });

  it('asks for the token, refuses a wrong one, and keeps the session in an HttpOnly cookie', async () => {
    const session = await openPage(browser, server, { logIn: false });
    const { page } = session;
    await page.getByLabel('API token').fill('not-the-token-at-all');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.locator('.login-message').textContent()).toBe('That is not the API token.');

    await page.getByLabel('API token').fill(server.token);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('.live[data-state="live"]').waitFor();
    const cookies = await session.context.cookies();
    const cookie = cookies.find((c) => c.name === 'reception_session');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Strict');
    expect(cookie?.value).not.toContain(server.token);
    expect(await page.evaluate('document.cookie')).not.toContain('reception_session');

    // A reload stays logged in; logging out brings the form back and ends the session.
    await page.reload();
    await page.locator('.live[data-state="live"]').waitFor();
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('API token').waitFor();
    const after = await page.evaluate('fetch("/api/sources").then((r) => r.status)');
    expect(after).toBe(401);
    await session.close();
  });

  it('asks for the token again when a stale session cookie is answered 429 (an address that sent too many wrong tokens)', async () => {
    const own = await startApp();
    try {
      const session = await openPage(browser, own, { logIn: false });
      const { page } = session;
      for (let i = 0; i < 5; i++) {
        const answer = await fetch(`${own.url}/api/sources`, { headers: { authorization: 'Bearer wrong' } });
        expect(answer.status).toBe(401);
        await answer.arrayBuffer();
      }
      // The token changed since this browser logged in: its cookie is wrong, and this address is throttled.
      await session.context.addCookies([{ name: 'reception_session', value: 'stale-session-value', url: own.url }]);
      await page.reload();
      await page.getByLabel('API token').waitFor();
      expect(await page.evaluate('fetch("/api/sources").then((r) => r.status)')).toBe(429);
      // The right token is taken at once, throttled address or not.
      await page.getByLabel('API token').fill(own.token);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.locator('.live[data-state="live"]').waitFor();
      await session.close();
    } finally {
      await own.close();
    }
  });

  it("shows the curl line for a first webhook when the inbox is empty, with this server's address", async () => {
    const empty = await startApp();
    try {
      const session = await openPage(browser, empty);
      const line = await session.page.locator('.first-curl').textContent();
      expect(line).toContain(`'${empty.url}/api/webhook/test'`);
      expect(line).toContain("-H 'Content-Type: application/json'");
      await session.close();
    } finally {
      await empty.close();
    }
  });

  it('shows a webhook sent while the page is open within a second, highlighted, and counts it', async () => {
    const session = await openPage(browser, server);
    const { page } = session;
    const started = Date.now();
    const sent = await sendWebhook(server, 'live-check', JSON.stringify({ event: 'ping', n: 1 }));
    await row(page, sent.id).waitFor({ timeout: 1000 });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await row(page, sent.id).getAttribute('class')).toContain('fresh');
    expect(await page.locator('.delivery-list li').first().getAttribute('data-id')).toBe(sent.id);
    expect(await row(page, sent.id).locator('.row-source').textContent()).toBe('live-check');
    const source = page.locator('.source[data-source="live-check"]');
    await expect.poll(() => source.locator('.source-count').textContent()).toBe('1');
    expect(await source.locator('.source-seen').textContent()).toMatch(/just now|s ago/);
    await session.close();
  });

  it('resumes after the stream drops: what arrived meanwhile shows up once, nothing twice', async () => {
    const session = await openPage(browser, server, { hash: '#source=resume' });
    const { page } = session;
    const before = await sendWebhook(server, 'resume', '{"n":1}');
    await row(page, before.id).waitFor({ timeout: 1000 });
    server.app.streams.closeAll();
    const during = await sendWebhook(server, 'resume', '{"n":2}');
    await row(page, during.id).waitFor({ timeout: 10_000 });
    await page.locator('.live[data-state="live"]').waitFor();
    const after = await sendWebhook(server, 'resume', '{"n":3}');
    await row(page, after.id).waitFor({ timeout: 1000 });
    const shown = await page.locator('.delivery-list li').evaluateAll((items) => items.map((li) => li.getAttribute('data-id')));
    expect(shown).toEqual([after.id, during.id, before.id]);
    await session.close();
  });

  it('keeps at most 1,000 rows while deliveries pour in, and pages on from the oldest one kept, without a gap', async () => {
    const session = await openPage(browser, server, { hash: '#source=flood' });
    const { page } = session;
    const ids: string[] = [];
    for (let batch = 0; batch < 21; batch++) {
      const sent = await Promise.all(
        Array.from({ length: 50 }, (_, i) => sendWebhook(server, 'flood', JSON.stringify({ batch, i }))),
      );
      ids.push(...sent.map((s) => s.id));
    }
    const all = (await (await fetch(`${server.url}/api/deliveries?source=flood&limit=500`, { headers: server.auth })).json()) as {
      items: Array<{ id: string }>;
      nextCursor: string | null;
    };
    const newest = all.items.map((item) => item.id);
    await row(page, newest[0] ?? '').waitFor({ timeout: 5000 });
    await expect.poll(() => page.locator('.delivery-list li').count(), { timeout: 5000 }).toBe(1000);
    const shown = await page.locator('.delivery-list li').evaluateAll((items) => items.map((li) => li.getAttribute('data-id')));
    expect(shown.slice(0, 500)).toEqual(newest);
    await page.locator('[data-action="load-older"]').click();
    await expect.poll(() => page.locator('.delivery-list li').count()).toBe(1050);
    expect(await page.locator('.list-footer').textContent()).toContain('That is all');
    // Every delivery once, newest first: the rows pushed out came back, none missing, none twice.
    const after = await page.locator('.delivery-list li').evaluateAll((items) => items.map((li) => li.getAttribute('data-id')));
    expect(new Set(after).size).toBe(1050);
    expect(new Set(after)).toEqual(new Set(ids));
    // What the reader loaded stays: one more arrival pushes out one row, not the page loaded.
    const late = await sendWebhook(server, 'flood', '{"late":true}');
    await row(page, late.id).waitFor({ timeout: 5000 });
    expect(await page.locator('.delivery-list li').count()).toBe(1050);
    await session.close();
  });

  it('opens a delivery: facts, verification badge, headers table, body tree and raw body', async () => {
    const raw = '{"event":"push","repository":{"name":"reception","stars":42},"tags":["a","b"],"ok":true,"none":null}';
    const sent = await sendWebhook(server, 'github', raw, {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-custom-header': 'custom value 1',
    });
    const session = await openPage(browser, server);
    const { page } = session;
    await row(page, sent.id).locator('a').click();
    const detail = page.locator('.detail');
    await detail.waitFor();
    expect(await page.evaluate('location.hash')).toBe(`#id=${sent.id}`);
    expect(await detail.locator('.detail-source').textContent()).toBe('github');
    const meta = await detail.locator('.meta').innerText();
    expect(meta).toContain('application/json');
    expect(meta).toContain(`${raw.length} bytes`);
    expect(meta).toContain('127.0.0.1');
    expect(meta).toContain(sent.id);
    expect(await detail.locator('.detail-head .badge').textContent()).toBe('unsigned');

    const headers = detail.locator('.headers-table tbody tr');
    const pairs = await headers.evaluateAll((rows) => rows.map((r) => [r.children[0]?.textContent, r.children[1]?.textContent]));
    expect(pairs).toContainEqual(['x-github-event', 'push']);
    expect(pairs).toContainEqual(['x-custom-header', 'custom value 1']);
    expect(pairs).toContainEqual(['content-type', 'application/json']);

    const tree = detail.locator('.json-tree');
    expect(await tree.innerText()).toContain('"repository": { 2 keys }');
    expect(await tree.innerText()).toContain('"name": "reception"');
    expect(await tree.locator('.json-number').first().textContent()).toBe('42');
    // Collapse and open a branch.
    await tree.locator('summary', { hasText: '"repository"' }).click();
    expect(await tree.locator('details.json-node', { hasText: '"repository"' }).last().getAttribute('open')).toBeNull();

    await detail.getByRole('tab', { name: 'Raw' }).click();
    await expect.poll(() => detail.locator('.raw-body').textContent()).toBe(raw);
    await session.close();
  });

  it('shows form data as a table', async () => {
    const sent = await sendWebhook(server, 'twilio', 'From=%2B14155550100&Body=hello+there&Tag=a&Tag=b', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    const session = await openPage(browser, server, { hash: `#id=${sent.id}` });
    const table = session.page.locator('.form-table tbody tr');
    await table.first().waitFor();
    const pairs = await table.evaluateAll((rows) => rows.map((r) => [r.children[0]?.textContent, r.children[1]?.textContent]));
    expect(pairs).toEqual([
      ['From', '+14155550100'],
      ['Body', 'hello there'],
      ['Tag', 'a'],
      ['Tag', 'b'],
    ]);
    await session.close();
  });

  it('pages further back with the cursor, filters by source and finds by id', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 57; i++) ids.push((await sendWebhook(server, 'bulk', JSON.stringify({ i }))).id);
    const session = await openPage(browser, server);
    const { page } = session;
    await page.locator('.source[data-source="bulk"]').click();
    await expect.poll(() => page.locator('.pane-title').nth(1).textContent()).toBe('From bulk');
    await expect.poll(() => page.locator('.delivery-list li').count()).toBe(50);
    await page.locator('[data-action="load-older"]').click();
    await expect.poll(() => page.locator('.delivery-list li').count()).toBe(57);
    expect(await page.locator('.list-footer').textContent()).toContain('That is all');
    const shown = await page.locator('.delivery-list li').evaluateAll((items) => items.map((li) => li.getAttribute('data-id')));
    expect(shown).toEqual([...ids].reverse());
    expect(await page.locator('.source[data-source="bulk"] .source-count').textContent()).toBe('57');

    // Deliveries of another source do not enter the filtered list.
    const other = await sendWebhook(server, 'elsewhere', '{"x":1}');
    const mine = await sendWebhook(server, 'bulk', '{"i":"new"}');
    await row(page, mine.id).waitFor({ timeout: 1000 });
    expect(await row(page, other.id).count()).toBe(0);

    // Find by id opens any delivery; an unknown id says so.
    await page.getByLabel('Find a delivery by id').fill(other.id);
    await page.getByLabel('Find a delivery by id').press('Enter');
    await expect.poll(() => page.locator('.detail').getAttribute('data-id')).toBe(other.id);
    await page.getByLabel('Find a delivery by id').fill('no-such-id');
    await page.getByLabel('Find a delivery by id').press('Enter');
    await expect.poll(() => page.locator('.toast').textContent()).toBe('No delivery has that id.');
    await session.close();
  });

  it('moves through the list with j/k and arrows, opens with Enter, closes with Escape', async () => {
    const source = 'keys';
    const sent = [];
    for (let i = 0; i < 3; i++) sent.push(await sendWebhook(server, source, JSON.stringify({ i })));
    const session = await openPage(browser, server, { hash: `#source=${source}` });
    const { page } = session;
    await row(page, sent[0]?.id ?? '').waitFor();
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('k');
    expect(await page.evaluate('document.activeElement.dataset.id')).toBe(sent[1]?.id);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.detail').getAttribute('data-id')).toBe(sent[1]?.id);
    expect(
      await row(page, sent[1]?.id ?? '')
        .locator('a')
        .getAttribute('aria-current'),
    ).toBe('true');
    await page.locator('body').press('Escape');
    await page.locator('.detail-placeholder').waitFor();
    await page.keyboard.press('/');
    expect(await page.evaluate('document.activeElement.getAttribute("aria-label")')).toBe('Find a delivery by id');
    await session.close();
  });

  it('downloads the raw body as an attachment and deletes after confirmation', async () => {
    const raw = '{"order": 7,\n  "total": "12.50"}\n';
    const sent = await sendWebhook(server, 'shop', raw);
    const session = await openPage(browser, server, { hash: `#source=shop&id=${sent.id}` });
    const { page } = session;
    await page.locator('.detail').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-action="download"]').click()]);
    expect(download.suggestedFilename()).toBe(`${sent.id}.body`);
    expect(readFileSync(await download.path(), 'utf8')).toBe(raw);

    await page.locator('[data-action="delete"]').click();
    await page.locator('[data-action="cancel-delete"]').click();
    expect(await page.locator('.confirm-box').isHidden()).toBe(true);
    expect((await fetch(`${server.url}/api/deliveries/${sent.id}`, { headers: server.auth })).status).toBe(200);
    await page.locator('[data-action="delete"]').click();
    await page.locator('[data-action="confirm-delete"]').click();
    await row(page, sent.id).waitFor({ state: 'detached' });
    expect((await fetch(`${server.url}/api/deliveries/${sent.id}`, { headers: server.auth })).status).toBe(404);
    expect(session.dialogs).toEqual([]);
    await session.close();
  });

  it('fits a phone: one pane at a time, Back returns to the list', async () => {
    const sent = await sendWebhook(server, 'phone', '{"hello":"phone"}');
    const session = await openPage(browser, server, { viewport: { width: 390, height: 844 }, hash: '#source=phone' });
    const { page } = session;
    await row(page, sent.id).locator('a').click();
    await page.locator('.detail').waitFor();
    expect(await page.locator('.list-pane').isVisible()).toBe(false);
    expect(await page.locator('.back-button').isVisible()).toBe(true);
    const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBe(0);
    await page.locator('.back-button').click();
    await row(page, sent.id).waitFor();
    expect(await page.locator('.detail-pane').isVisible()).toBe(false);
    await session.close();
  });

  it('follows the system theme', async () => {
    const background = async (scheme: 'light' | 'dark'): Promise<string> => {
      const session = await openPage(browser, server, { colorScheme: scheme });
      const color = (await session.page.evaluate('getComputedStyle(document.body).backgroundColor')) as string;
      await session.close();
      return color;
    };
    expect(await background('light')).toBe('rgb(244, 245, 247)');
    expect(await background('dark')).toBe('rgb(15, 17, 21)');
  });
});
