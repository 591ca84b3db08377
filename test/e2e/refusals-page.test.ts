import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SourceRules } from '../../src/receive/source-rules.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { DEFAULT_POLICY } from '../helpers/configured-app.js';
import { launchChromium, skipBrowserTests } from '../helpers/browser.js';
import { openPage, sendWebhook, type PageSession } from '../helpers/page.js';
import { ensureWebBuilt } from '../helpers/web-build.js';

// Were it ever parsed as HTML, this would request /x, set window.__pwned or open a dialog.
const HOSTILE = `<img src=x onerror="window.__pwned='body';alert('body')">\u202eevil`;

/** Posts to the webhook route and insists on the refusal `status`; answers the problem's detail. */
async function refused(server: RunningApp, path: string, status: number, init: RequestInit): Promise<string> {
  const response = await fetch(`${server.url}/api/webhook/${path}`, { method: 'POST', ...init });
  expect(response.status).toBe(status);
  return ((await response.json()) as { detail: string }).detail;
}

/** The refusals shown in the panel, newest first: code and source text. */
async function shown(page: Page): Promise<Array<{ code: string | null; source: string }>> {
  return page.locator('#refusals-panel .refusal').evaluateAll((items) =>
    items.map((item) => ({
      code: item.getAttribute('data-code'),
      source: item.querySelector('.refusal-source')?.textContent ?? '',
    })),
  );
}

describe.skipIf(skipBrowserTests)('the refused requests on the inbox page in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser;
  let server: RunningApp;
  let session: PageSession | undefined;

  beforeAll(async () => {
    await ensureWebBuilt();
    browser = await launchChromium();
    server = await startApp({
      refusalWriter: { intervalMs: 20 },
      rules: SourceRules.fromConfig(
        { sources: { signed: { verify: { scheme: 'github', secrets: ['s3cret'] } } } },
        DEFAULT_POLICY,
      ),
    });
  }, 120_000);
  afterAll(async () => {
    await browser.close();
    await server.close();
  });
  afterEach(async () => {
    if (session !== undefined) {
      // Nothing the panel drew may trip the CSP, run, or log an error.
      expect(await session.violations()).toEqual([]);
      expect(session.dialogs).toEqual([]);
      expect(await session.page.evaluate('window.__pwned')).toBeUndefined();
      expect(session.requests.filter((url) => new URL(url).pathname === '/x')).toEqual([]);
      expect(session.consoleErrors.filter((e) => !e.includes('401'))).toEqual([]);
      await session.close();
      session = undefined;
    }
  });

  it('shows why each request was refused, with the detail the sender got, its headers and its body as text; live', async () => {
    const typeDetail = await refused(server, 'shop', 415, { headers: { 'content-type': 'text/html' }, body: HOSTILE });
    const signatureDetail = await refused(server, 'signed', 401, {
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=00', authorization: 'Bearer hidden' },
      body: '{"a":1}',
    });
    await sendWebhook(server, 'shop', '{"fine":true}');
    await server.app.refusals.flush();

    session = await openPage(browser, server);
    const { page } = session;
    await page.locator('[data-action="refusals"]').click();
    await page.locator('#refusals-panel .refusal').nth(1).waitFor({ timeout: 5000 });
    expect(await shown(page)).toEqual([
      { code: 'signature_invalid', source: 'signed' },
      { code: 'unsupported_media_type', source: 'shop' },
    ]);

    const signature = page.locator('#refusals-panel .refusal[data-code="signature_invalid"]');
    expect(await signature.locator('.refusal-status').textContent()).toBe('401');
    expect(await signature.locator('.refusal-detail').textContent()).toBe(signatureDetail);
    await signature.locator('summary').click();
    const headerRows = await signature
      .locator('.headers-table tbody tr')
      .evaluateAll((rows) =>
        rows.map((row) => [row.querySelector('th')?.textContent ?? '', row.querySelector('td')?.textContent ?? '']),
      );
    expect(headerRows).toContainEqual(['authorization', '[redacted]']);
    expect(headerRows).toContainEqual(['x-hub-signature-256', 'sha256=00']);

    const type = page.locator('#refusals-panel .refusal[data-code="unsupported_media_type"]');
    expect(await type.locator('.refusal-detail').textContent()).toBe(typeDetail);
    await type.locator('summary').click();
    // The body as the sender sent it, as text; the right-to-left override shown as an escape, not obeyed.
    expect(await type.locator('.refusal-preview').textContent()).toBe(HOSTILE.replace('\u202e', '\\u202e'));
    expect(await page.locator('#app img').count()).toBe(0);

    // A new refusal appears while the panel is open.
    await refused(server, '%FF', 400, { headers: { 'content-type': 'application/json' }, body: '{}' });
    await expect
      .poll(() => shown(page), { timeout: 5000 })
      .toEqual([
        { code: 'invalid_source', source: 'invalid source name' },
        { code: 'signature_invalid', source: 'signed' },
        { code: 'unsupported_media_type', source: 'shop' },
      ]);
  });

  it("follows the inbox's source: only its refusals, or every source's at a click", async () => {
    await refused(server, 'other', 422, { headers: { 'content-type': 'application/json' }, body: '[1]' });
    await server.app.refusals.flush();
    session = await openPage(browser, server, { hash: '#source=shop' });
    const { page } = session;
    await page.locator('[data-action="refusals"]').click();
    const panel = page.locator('#refusals-panel');
    await panel.locator('.refusal').first().waitFor({ timeout: 5000 });
    expect(await panel.locator('h2').textContent()).toBe('Refused requests to shop');
    expect((await shown(page)).map((r) => r.source)).toEqual(['shop']);

    await panel.locator('[data-action="refusals-all"]').click();
    await expect.poll(async () => (await shown(page)).length, { timeout: 5000 }).toBeGreaterThan(1);
    expect((await shown(page)).map((r) => r.code)[0]).toBe('json_not_object');
    expect(await panel.locator('h2').textContent()).toBe('Refused requests');

    // Another source in the inbox: the panel follows it.
    await page.evaluate("location.hash = '#source=other'");
    await expect.poll(() => panel.locator('h2').textContent(), { timeout: 5000 }).toBe('Refused requests to other');
    await expect.poll(async () => (await shown(page)).map((r) => r.code), { timeout: 5000 }).toEqual(['json_not_object']);

    // Escape, from inside the panel, closes it.
    await panel.locator('.refusal summary').first().click();
    await page.keyboard.press('Escape');
    await expect.poll(() => panel.isHidden()).toBe(true);
  });

  it('writes every size one way, "5.7 MiB", with the exact bytes in a title, the detail the sender got included', async () => {
    const big = 'x'.repeat(Math.round(5.7 * 1024 * 1024));
    await refused(server, 'sizes', 413, { headers: { 'content-type': 'application/json' }, body: big });
    await refused(server, 'sizes', 415, { headers: { 'content-type': 'text/html' }, body: '<p>'.repeat(3400) });
    await server.app.refusals.flush();
    session = await openPage(browser, server, { hash: '#source=sizes' });
    const { page } = session;
    await page.locator('[data-action="refusals"]').click();
    const panel = page.locator('#refusals-panel');
    await panel.locator('.refusal').nth(1).waitFor({ timeout: 5000 });
    for (const summary of await panel.locator('.refusal summary').all()) await summary.click();

    // No count of bytes written out in what the view itself says (the headers are the sender's, as sent).
    const said = await panel
      .locator('.refusal-head, .refusal-detail, .refusal-request h3, .refusal-request > p')
      .evaluateAll((parts) => parts.map((part) => part.textContent ?? ''));
    expect(said.length).toBeGreaterThanOrEqual(6);
    for (const text of said) expect(text).not.toMatch(/\d{4,}|\bbytes?\b/);
    const sizes = await panel.locator('.size').evaluateAll((spans) =>
      spans.map((span) => ({
        text: span.textContent,
        bytes: Number(span.getAttribute('data-bytes')),
        title: span.getAttribute('title'),
      })),
    );
    for (const { text, bytes, title } of sizes) {
      expect(text).toMatch(/^\d+(\.\d)? (B|KiB|MiB)$/);
      expect(title?.replace(/[^\d]/g, '')).toBe(String(bytes));
      expect(title).toMatch(/ bytes?$/);
    }
    const tooLarge = panel.locator('.refusal[data-code="payload_too_large"]');
    expect(await tooLarge.locator('.refusal-detail').textContent()).toBe('The body is larger than 5.0 MiB.');
    expect(await tooLarge.locator('.refusal-detail .size').getAttribute('data-bytes')).toBe(String(5 * 1024 * 1024));
    const cut = panel.locator('.refusal[data-code="unsupported_media_type"] h3').nth(1);
    expect(await cut.textContent()).toBe('Body (the first 4.0 KiB of 10.0 KiB)');
    expect(await cut.locator('.size').evaluateAll((spans) => spans.map((span) => span.getAttribute('data-bytes')))).toEqual([
      '4096',
      '10200',
    ]);
  });
});
