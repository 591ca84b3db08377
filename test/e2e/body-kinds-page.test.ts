import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SourceRules } from '../../src/receive/source-rules.js';
import { validateConfig } from '../../src/config/source-config.js';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { launchChromium, skipBrowserTests } from '../helpers/browser.js';
import { openPage, row } from '../helpers/page.js';
import { ensureWebBuilt } from '../helpers/web-build.js';

/**
 * The delivery view of the bodies that are not JSON or form data (CONTRACT
 * 9), in Chromium: a multipart delivery lists its files and downloads each
 * one; XML reads as indented text, text as text; hostile names stay text.
 */

const CONFIG: ConfigFile = {
  sources: { mail: { accept: ['multipart'] }, soap: { accept: ['xml'] }, sns: { accept: ['text'] } },
};

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
]);
const HOSTILE_NAME = '<img src=x onerror=alert(1)>\u202egpj.html';

describe.skipIf(skipBrowserTests)('bodies of every kind in the page (Chromium)', () => {
  let browser: Browser | undefined;
  let server: RunningApp | undefined;
  beforeAll(async () => {
    await ensureWebBuilt();
    browser = await launchChromium();
    expect(validateConfig(CONFIG)).toEqual([]);
    server = await startApp({ rules: SourceRules.fromConfig(CONFIG, { maxBodyBytes: 5 * 1024 * 1024, anyJson: false }) });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const send = async (source: string, body: FormData | string, headers: Record<string, string> = {}): Promise<string> => {
    const running = server as RunningApp;
    const response = await fetch(`${running.url}/api/webhook/${source}`, { method: 'POST', body, headers });
    expect(response.status, await response.clone().text()).toBe(200);
    return ((await response.json()) as { id: string }).id;
  };

  it('lists the files of a multipart delivery and downloads each one', async () => {
    const running = server as RunningApp;
    const form = new FormData();
    form.append('from', 'ann@example.com');
    form.append('subject', '<b>not bold</b>');
    form.append('attachment1', new Blob([PNG], { type: 'image/png' }), 'report.png');
    form.append('attachment2', new Blob(['<script>alert(2)</script>'], { type: 'text/html' }), HOSTILE_NAME);
    const id = await send('mail', form);
    const session = await openPage(browser as Browser, running, { hash: `#source=mail&id=${id}` });
    const { page } = session;
    await page.locator('.files-list').waitFor();
    expect(await page.locator('.section-head [role="tab"][aria-selected="true"]').textContent()).toBe('Form');

    const items = page.locator('.file-item');
    expect(await items.count()).toBe(2);
    expect(await items.nth(0).locator('.file-name').textContent()).toBe('report.png');
    expect(await items.nth(0).locator('.file-meta').textContent()).toBe(
      `attachment1 · image/png · ${PNG.length} B (${PNG.length} bytes)`,
    );
    // The hostile name is text, with its bidirectional override shown as an escape, never markup.
    expect(await items.nth(1).locator('.file-name').textContent()).toBe('<img src=x onerror=alert(1)>\\u202egpj.html');
    expect(await page.locator('.detail img').count()).toBe(0);
    expect(await page.locator('.form-table').textContent()).toContain('<b>not bold</b>');

    const [png] = await Promise.all([
      page.waitForEvent('download'),
      items.nth(0).locator('[data-action="download-file"]').click(),
    ]);
    expect(png.suggestedFilename()).toBe('report.png');
    expect(readFileSync(await png.path()).equals(PNG)).toBe(true);
    const [html] = await Promise.all([
      page.waitForEvent('download'),
      items.nth(1).locator('[data-action="download-file"]').click(),
    ]);
    expect(html.suggestedFilename()).not.toContain('\u202e');
    expect(html.suggestedFilename()).toMatch(/gpj\.html$/);
    expect(readFileSync(await html.path(), 'utf8')).toBe('<script>alert(2)</script>');

    expect(session.dialogs).toEqual([]);
    expect(await session.violations()).toEqual([]);
    await session.close();
  });

  it('shows XML as indented text and text as text', async () => {
    const running = server as RunningApp;
    const xml = '<?xml version="1.0"?><note><to>Tove</to><img src="x" onerror="alert(3)"/><body>&lt;hi&gt;</body></note>';
    const xmlId = await send('soap', xml, { 'content-type': 'application/xml' });
    const session = await openPage(browser as Browser, running, { hash: `#source=soap&id=${xmlId}` });
    const { page } = session;
    await page.locator('.xml-body').waitFor();
    expect(await page.locator('.section-head [role="tab"][aria-selected="true"]').textContent()).toBe('XML');
    expect(await page.locator('.xml-body').textContent()).toBe(
      '<?xml version="1.0"?>\n<note>\n  <to>Tove</to>\n  <img src="x" onerror="alert(3)"/>\n  <body>&lt;hi&gt;</body>\n</note>',
    );
    expect(await page.locator('.detail img').count()).toBe(0);

    const textId = await send('sns', 'line one\nline two <i>x</i>', { 'content-type': 'text/plain' });
    await page.goto(`/#source=sns&id=${textId}`);
    await page.locator('.text-body').waitFor();
    expect(await page.locator('.text-body').textContent()).toBe('line one\nline two <i>x</i>');
    // The list shows the text's start on one line, not as a JSON string.
    expect(await row(page, textId).locator('.row-preview').textContent()).toBe('line one line two <i>x</i>');
    const snsId = await send('sns', '{"Type":"Notification","Message":"hi"}', { 'content-type': 'text/plain; charset=UTF-8' });
    await page.goto(`/#source=sns&id=${snsId}`);
    await page.locator('.json-tree').waitFor();
    expect(await page.locator('.json-tree').textContent()).toContain('"Notification"');

    expect(session.dialogs).toEqual([]);
    expect(await session.violations()).toEqual([]);
    await session.close();
  });
});
