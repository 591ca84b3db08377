import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from '../helpers/app.js';
import { launchChromium, skipBrowserTests } from '../helpers/browser.js';
import { hook, startWithConfig } from '../helpers/configured-app.js';
import { openPage, row, sendWebhook } from '../helpers/page.js';
import { ensureWebBuilt } from '../helpers/web-build.js';

/** Issue 21, part 3: what the page shows of one delivery, and how a short id finds it. */
describe.skipIf(skipBrowserTests)('a delivery on the page', () => {
  let browser: Browser;
  let server: RunningApp;
  beforeAll(async () => {
    await ensureWebBuilt();
    browser = await launchChromium();
    server = await startWithConfig({
      sources: { 'gh-keep': { verify: { scheme: 'github', secrets: ['s3cret'] }, onFailure: 'keep' } },
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  async function seqOf(id: string): Promise<number> {
    const res = await fetch(`${server.url}/api/deliveries/${id}`, { headers: server.auth });
    return ((await res.json()) as { seq: number }).seq;
  }

  /** The rows of a two-column table as [name, value] pairs. */
  function pairs(page: Page, selector: string): Promise<Array<[string, string]>> {
    return page
      .locator(`${selector} tbody tr`)
      .evaluateAll((rows) => rows.map((r) => [r.children[0]?.textContent ?? '', r.children[1]?.textContent ?? '']));
  }

  it('shows the seq as the short id, and Find takes it (with or without #); Escape leaves the find box', async () => {
    const sent = await sendWebhook(server, 'short-ids', '{"n":1}');
    const other = await sendWebhook(server, 'short-ids', '{"n":2}');
    const seq = await seqOf(sent.id);
    const session = await openPage(browser, server);
    const { page } = session;
    expect(await row(page, sent.id).locator('.row-seq').textContent()).toBe(`#${seq}`);

    const find = page.getByLabel('Find a delivery by id');
    await find.fill(`#${seq}`);
    await find.press('Enter');
    await expect.poll(() => page.locator('.detail').getAttribute('data-id')).toBe(sent.id);
    // The address names it by its id, as a click on its row would.
    expect(await page.evaluate('location.hash')).toBe(`#id=${sent.id}`);
    expect(await row(page, sent.id).locator('a').getAttribute('aria-current')).toBe('true');
    expect(await page.locator('.detail .delivery-seq').textContent()).toBe(`#${seq}`);

    await find.fill(String(await seqOf(other.id)));
    await find.press('Enter');
    await expect.poll(() => page.locator('.detail').getAttribute('data-id')).toBe(other.id);

    // Escape leaves the box, and the list's keys work again.
    await find.focus();
    await find.press('Escape');
    expect(await page.evaluate('document.activeElement?.getAttribute("aria-label") ?? null')).not.toBe('Find a delivery by id');
    await page.keyboard.press('Escape');
    await page.locator('.detail-placeholder').waitFor();
    await session.close();
  });

  it('says "unsigned" in grey for a source with no verification, and a failure in red with the sentence its sender got', async () => {
    const unsigned = await sendWebhook(server, 'plain', '{"n":1}');
    const answer = await hook(server, 'gh-keep', {
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` },
      body: '{"zen":"x"}',
    });
    expect(answer.status).toBe(401);
    const problem = JSON.parse(answer.text) as { detail: string };
    const failedId = await newestIdOf('gh-keep');
    expect(failedId).not.toBe('');

    const session = await openPage(browser, server, { hash: `#id=${unsigned.id}` });
    const { page } = session;
    const badge = page.locator('.detail-head .badge');
    await expect.poll(() => badge.textContent()).toBe('unsigned');
    // The colours the theme names, as the browser computes them.
    const colours = (await page.evaluate(`(() => {
      const probe = (name) => {
        const span = document.createElement('span');
        span.style.color = 'var(' + name + ')';
        document.body.appendChild(span);
        const colour = getComputedStyle(span).color;
        span.remove();
        return colour;
      };
      return { none: probe('--none'), bad: probe('--bad') };
    })()`)) as { none: string; bad: string };
    const badgeColour = (): Promise<unknown> =>
      page.evaluate(`getComputedStyle(document.querySelector('.detail-head .badge')).color`);
    expect(await badgeColour()).toBe(colours.none);
    expect(colours.none).not.toBe(colours.bad);

    await page.evaluate(`location.hash = '#id=${failedId}'`);
    await expect.poll(() => page.locator('.detail').getAttribute('data-id')).toBe(failedId);
    expect(await badge.textContent()).toBe('failed · github');
    expect(await badgeColour()).toBe(colours.bad);
    const sentence = await page.locator('.meta .verification-failure').textContent();
    // The sender's detail, less what it adds about keeping the delivery.
    expect(problem.detail).toBe(`${sentence ?? ''} The delivery was kept, as failed.`);
    expect(sentence).toContain('no signature matches');
    expect(await page.locator('.meta').innerText()).not.toContain('signature_mismatch');
    await session.close();
  });

  async function newestIdOf(source: string): Promise<string> {
    const res = await fetch(`${server.url}/api/deliveries?source=${source}&limit=1`, { headers: server.auth });
    const page = (await res.json()) as { items: Array<{ id: string }> };
    return page.items[0]?.id ?? '';
  }

  it('shows the body first, then the query string as a table, then the headers', async () => {
    const answer = await hook(server, 'queried', {
      query: 'x=1&y=two+words&x=3&e=%E2%9C%93',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(answer.status).toBe(200);
    const { id } = JSON.parse(answer.text) as { id: string };
    const session = await openPage(browser, server, { hash: `#id=${id}` });
    const { page } = session;
    await page.locator('.detail .query-table').waitFor();
    expect(await pairs(page, '.detail .query-table')).toEqual([
      ['x', '1'],
      ['y', 'two words'],
      ['x', '3'],
      ['e', '✓'],
    ]);
    const order = await page
      .locator('.detail .detail-section')
      .evaluateAll((sections) => sections.map((s) => s.getAttribute('aria-label')));
    const at = (label: string): number => order.indexOf(label);
    // The body first, right under the summary (issue 31 part 5); then the query string and the headers.
    expect(at('Body')).toBe(0);
    expect(at('Query string')).toBeGreaterThan(at('Body'));
    expect(at('Query string')).toBeLessThan(at('Headers'));
    await session.close();
  });

  it('draws the tree from the body as sent: a key sent twice is there twice, 1.0e+2 stays as written', async () => {
    const raw =
      '{"amount": 1.0e+2, "id": "a", "id": "b", "nested": {"big": 12345678901234567890, "zero": -0.0}, "name": "caf\\u00e9"}';
    const sent = await sendWebhook(server, 'as-sent', raw);
    const session = await openPage(browser, server, { hash: `#id=${sent.id}` });
    const { page } = session;
    const tree = page.locator('.detail .json-tree');
    await tree.waitFor();
    const leaves = await tree.locator('.json-leaf').evaluateAll((items) => items.map((item) => item.textContent));
    expect(leaves).toEqual([
      '"amount": 1.0e+2',
      '"id": "a"',
      '"id": "b"',
      '"big": 12345678901234567890',
      '"zero": -0.0',
      // A string reads decoded; the Raw tab keeps the escape.
      '"name": "café"',
    ]);
    expect(await tree.locator('.json-duplicate').count()).toBe(2);
    await session.close();
  });

  it('shows a body over 256 KiB in part, with "Show all" for the rest, in the tree and in the raw view', async () => {
    const items = Array.from({ length: 6000 }, (_, i) => `"k${String(i).padStart(5, '0')}": "${'x'.repeat(40)}"`);
    const raw = `{${items.join(', ')}}`;
    expect(raw.length).toBeGreaterThan(256 * 1024);
    const sent = await sendWebhook(server, 'large', raw);
    const session = await openPage(browser, server, { hash: `#id=${sent.id}` });
    const { page } = session;
    const detail = page.locator('.detail');
    await detail.locator('.json-tree').waitFor();
    expect(await detail.locator('.part-note').textContent()).toContain('first 256.0 KiB are shown');
    const partKeys = Number(
      /\{ (\d+) keys \}/.exec((await detail.locator('.json-tree summary').first().textContent()) ?? '')?.[1],
    );
    expect(partKeys).toBeGreaterThan(1000);
    expect(partKeys).toBeLessThan(6000);
    await detail.locator('[data-action="show-all"]').click();
    await expect.poll(() => detail.locator('.json-tree summary').first().textContent()).toBe('{ 6000 keys }');
    expect(await detail.locator('.part-note').count()).toBe(0);

    await detail.getByRole('tab', { name: 'Raw' }).click();
    await detail.locator('.raw-body').waitFor();
    expect(await detail.locator('.raw-body').evaluate((el) => el.textContent?.length)).toBe(256 * 1024);
    await detail.locator('[data-action="show-all"]').click();
    await expect.poll(() => detail.locator('.raw-body').evaluate((el) => el.textContent?.length)).toBe(raw.length);
    await session.close();
  });

  it('shows a form body over 256 KiB in part too', async () => {
    const fields = Array.from({ length: 3000 }, (_, i) => `f${i}=${'v'.repeat(100)}`).join('&');
    const sent = await sendWebhook(server, 'large-form', fields, { 'content-type': 'application/x-www-form-urlencoded' });
    const session = await openPage(browser, server, { hash: `#id=${sent.id}` });
    const { page } = session;
    const rows = page.locator('.detail .form-table tbody tr');
    await rows.first().waitFor();
    const shown = await rows.count();
    expect(shown).toBeGreaterThan(2000);
    expect(shown).toBeLessThan(3000);
    await page.locator('.detail [data-action="show-all"]').click();
    await expect.poll(() => rows.count()).toBe(3000);
    await session.close();
  });

  it('keeps the source chips readable on a 390 px wide phone', async () => {
    for (const source of ['stripe', 'github', 'shopify-orders-eu', 'twilio']) await sendWebhook(server, source, '{"n":1}');
    const session = await openPage(browser, server, { viewport: { width: 390, height: 844 } });
    const { page } = session;
    const chip = page.locator('.source[data-source="shopify-orders-eu"]');
    await chip.waitFor();
    const look = (await page.evaluate(`(() => {
      const chip = document.querySelector('.source[data-source="shopify-orders-eu"]');
      const name = chip.querySelector('.source-name');
      const count = chip.querySelector('.source-count');
      return {
        nameCut: name.scrollWidth > name.clientWidth,
        fontPx: parseFloat(getComputedStyle(name).fontSize),
        height: chip.getBoundingClientRect().height,
        countShown: count.getBoundingClientRect().width > 0,
        sameLine: Math.abs(name.getBoundingClientRect().top - count.getBoundingClientRect().top) < 4,
      };
    })()`)) as { nameCut: boolean; fontPx: number; height: number; countShown: boolean; sameLine: boolean };
    expect(look).toEqual({
      nameCut: false,
      fontPx: expect.any(Number),
      height: expect.any(Number),
      countShown: true,
      sameLine: true,
    });
    expect(look.fontPx).toBeGreaterThanOrEqual(14);
    // A finger can hit it: at least 32 px tall.
    expect(look.height).toBeGreaterThanOrEqual(32);
    // No chip runs off the edge of the screen: they wrap instead.
    const boxes = await page.locator('.source-list .source').evaluateAll((links) =>
      links.map((link) => {
        const box = link.getBoundingClientRect();
        return { left: box.left, right: box.right };
      }),
    );
    expect(boxes.length).toBeGreaterThanOrEqual(5);
    for (const box of boxes) {
      expect(box.left).toBeGreaterThanOrEqual(0);
      expect(box.right).toBeLessThanOrEqual(390);
    }
    await session.close();
  });
});
