import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RunningApp } from '../helpers/app.js';
import { PAGE_CSP } from '../../src/page/web-page.js';
import { skipBrowserTests, useBrowserAndServer } from '../helpers/browser.js';
import { openPage, row, sendWebhook, type PageSession } from '../helpers/page.js';

// Each payload, were it ever parsed as HTML and run, would set window.__pwned,
// request a /pwned/<where> marker from this server, or open a dialog; an
// `<img src=x>` alone would request /x. The tests watch for all of those.
const mark = (where: string): string => `fetch('/pwned/${where}');window.__pwned='${where}';alert('${where}')`;
const IMG = (where: string): string => `<img src=x onerror="${mark(where)}">`;
const SCRIPT = (where: string): string => `</script><script>${mark(where)}</script>`;

// A source name is one path segment: everything but "/" is allowed.
const HOSTILE_SOURCE = `<img src=x onerror="window.__pwned='source';alert('source')">`;
const HOSTILE_BODY = {
  [IMG('key')]: IMG('value'),
  closing: SCRIPT('script'),
  nested: {
    [SCRIPT('nested-key')]: [`<svg onload="${mark('svg')}">`, `<iframe srcdoc="<script>${mark('iframe')}</script>">`],
    link: `javascript:${mark('href')}`,
  },
};
const HOSTILE_HEADER = IMG('header');

async function assertNothingRan(session: PageSession): Promise<void> {
  const { page } = session;
  expect(await page.evaluate('window.__pwned')).toBeUndefined();
  expect(await page.evaluate('Object.prototype.polluted')).toBeUndefined();
  expect(session.requests.filter((url) => /\/(pwned|x)(\/|$|\?)/.test(new URL(url).pathname))).toEqual([]);
  expect(session.dialogs).toEqual([]);
  // Not even an attempt that CSP had to stop: the payloads never became markup.
  expect(await session.violations()).toEqual([]);
  // The page's own traffic pictures are SVG drawn by its code (marked so); any other is a payload become markup.
  const markup = '#app img, #app svg:not([data-page-drawn]), #app iframe, #app script, #app object, #app embed';
  expect(await page.locator(markup).count()).toBe(0);
  expect(await page.locator('#app svg[data-page-drawn] :is(img, iframe, script, object, embed, foreignObject, a)').count()).toBe(
    0,
  );
}

describe.skipIf(skipBrowserTests)('hostile payloads stay inert text', () => {
  let browser: Browser;
  let server: RunningApp;
  useBrowserAndServer((b, s) => {
    browser = b;
    server = s;
  });

  it('serves the page with a strict Content-Security-Policy, nosniff and no referrer', async () => {
    const session = await openPage(browser, server, { logIn: false });
    const response = await session.page.goto('/');
    const headers = response?.headers() ?? {};
    expect(headers['content-security-policy']).toBe(PAGE_CSP);
    expect(PAGE_CSP).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('no-referrer');
    await session.close();
  });

  it('the watchers work: CSP stops an inline script, and a marker request is seen', async () => {
    const session = await openPage(browser, server);
    const { page } = session;
    await page.evaluate(`(() => {
      const s = document.createElement('script');
      s.textContent = "window.__pwned = 'inline'";
      document.body.appendChild(s);
    })()`);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    await expect.poll(() => session.violations()).toEqual([expect.stringContaining('script-src')]);
    await page.evaluate("fetch('/pwned/control').catch(() => undefined)");
    await expect.poll(() => session.requests.some((url) => url.endsWith('/pwned/control'))).toBe(true);
    await session.close();
  });

  it('in the source name, body keys and values, and a header value: shown as text, nothing runs', async () => {
    const session = await openPage(browser, server);
    const { page } = session;
    // Sent while the page is open, so it goes through the live stream too.
    // A "__proto__" key too (an object literal cannot carry one, so it goes into the text).
    const raw = JSON.stringify(HOSTILE_BODY).replace(
      '"closing"',
      `"__proto__":{"polluted":${JSON.stringify(IMG('proto'))}},"closing"`,
    );
    const sent = await sendWebhook(server, HOSTILE_SOURCE, raw, { 'content-type': 'application/json', 'x-evil': HOSTILE_HEADER });
    expect(sent.source).toBe(HOSTILE_SOURCE);
    await row(page, sent.id).waitFor({ timeout: 1000 });
    expect(await row(page, sent.id).locator('.row-source').textContent()).toBe(HOSTILE_SOURCE);
    await expect.poll(() => page.locator('.source .source-name', { hasText: '<img' }).textContent()).toBe(HOSTILE_SOURCE);

    await row(page, sent.id).locator('a').click();
    const detail = page.locator('.detail');
    await detail.waitFor();
    expect(await detail.locator('.detail-source').textContent()).toBe(HOSTILE_SOURCE);
    const tree = await detail.locator('.json-tree').innerText();
    expect(tree).toContain(JSON.stringify(IMG('key')));
    expect(tree).toContain(JSON.stringify(IMG('value')));
    expect(tree).toContain(JSON.stringify(SCRIPT('script')));
    expect(tree).toContain(JSON.stringify(SCRIPT('nested-key')));
    expect(tree).toContain('"__proto__": { 1 key }');
    // Visible to a person, as the characters that were sent.
    expect(await page.getByText(JSON.stringify(IMG('value'))).isVisible()).toBe(true);
    const headerValue = detail.locator('.headers-table tr', { hasText: 'x-evil' }).locator('td');
    expect(await headerValue.textContent()).toBe(HOSTILE_HEADER);

    await detail.getByRole('tab', { name: 'Raw' }).click();
    await expect.poll(() => detail.locator('.raw-body').textContent()).toBe(raw);
    await assertNothingRan(session);

    // A reload renders all of it again from the API rather than the stream.
    await page.reload();
    await page.locator('.detail .json-tree').waitFor();
    await page.locator('.detail').getByRole('tab', { name: 'Raw' }).click();
    await page.locator('.raw-body').waitFor();
    await assertNothingRan(session);
    await session.close();
  });

  it('bidirectional controls in a source, keys and values show as escapes, never reorder the text', async () => {
    const session = await openPage(browser, server);
    const { page } = session;
    // In a key, U+202E would make `"amount": "1000.50"` read `"amount"05.0001" :"`.
    const raw = '{"amount\u202e":"1000.50","note":"pay \u202e0.01 EUR","mark":"a\u2066b\u2069c\u200f"}';
    const sent = await sendWebhook(server, '\u202eevil-source', raw, { 'content-type': 'application/json', 'x-bidi': 'x' });
    await row(page, sent.id).waitFor({ timeout: 1000 });
    expect(await row(page, sent.id).locator('.row-source').textContent()).toBe('\\u202eevil-source');
    await row(page, sent.id).locator('a').click();
    const detail = page.locator('.detail');
    await detail.locator('.json-tree').waitFor();
    expect(await detail.locator('.detail-source').textContent()).toBe('\\u202eevil-source');
    const tree = await detail.locator('.json-tree').innerText();
    expect(tree).toContain('"amount\\u202e": "1000.50"');
    expect(tree).toContain('"pay \\u202e0.01 EUR"');
    expect(tree).toContain('"a\\u2066b\\u2069c\\u200f"');
    expect(await detail.locator('.json-tree .bidi-control').count()).toBe(5);
    // Not one control character is left in the page's text.
    expect(await page.locator('#app').innerText()).not.toMatch(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u);
    await assertNothingRan(session);
    await session.close();
  });

  it('lookalike source names look different: an invisible character shows its escape, a mixed-script name is marked', async () => {
    const session = await openPage(browser, server);
    const { page } = session;
    // U+0455 is the Cyrillic letter dze, which looks like a Latin s.
    const names = ['stripe', 'stripe\u200b', '\u0455tripe', 'stripe\u3164', 'str\u00adipe', 'stripe\ufe0f', 'stripe\u{e0041}'];
    const sent = [];
    for (const name of names) sent.push(await sendWebhook(server, name, '{"a":1}'));
    const nameIn = (source: string) => page.locator(`.source[data-source="${source}"] .source-name`);
    for (const name of names) await nameIn(name).waitFor({ timeout: 2000 });

    // What a person reads in the sources panel: seven different names.
    const shown = await Promise.all(names.map((name) => nameIn(name).innerText()));
    expect(shown).toEqual([
      'stripe',
      'stripe\\u200b',
      'mixed scripts\u0455tripe',
      'stripe\\u3164',
      'str\\u00adipe',
      'stripe\\ufe0f',
      'stripe\\u{e0041}',
    ]);
    expect(new Set(shown).size).toBe(names.length);
    const escape = nameIn('stripe\u200b').locator('.invisible-char');
    expect(await escape.isVisible()).toBe(true);
    expect(await escape.textContent()).toBe('\\u200b');
    const mark = nameIn('\u0455tripe').locator('.mixed-script');
    expect(await mark.isVisible()).toBe(true);
    expect(await mark.getAttribute('title')).toBe(
      'This name mixes Cyrillic and Latin letters: it may imitate the name of another source.',
    );
    expect(await nameIn('stripe').locator('.mixed-script, .invisible-char').count()).toBe(0);

    // The same in the list and in the detail.
    expect(
      await row(page, sent[1]?.id ?? '')
        .locator('.row-source')
        .innerText(),
    ).toBe('stripe\\u200b');
    expect(
      await row(page, sent[2]?.id ?? '')
        .locator('.row-source .mixed-script')
        .isVisible(),
    ).toBe(true);
    await row(page, sent[2]?.id ?? '')
      .locator('a')
      .click();
    await page.locator('.detail .json-tree').waitFor();
    expect(await page.locator('.detail-source .mixed-script').isVisible()).toBe(true);
    expect(await page.locator('.detail-source').innerText()).toContain('\u0455tripe');
    await row(page, sent[1]?.id ?? '')
      .locator('a')
      .click();
    await expect.poll(() => page.locator('.detail-source').innerText()).toBe('stripe\\u200b');
    // Not one invisible character is left in the page's text.
    expect(await page.locator('#app').innerText()).not.toMatch(/[\p{Cf}\p{Default_Ignorable_Code_Point}]/u);
    await assertNothingRan(session);
    await session.close();
  });

  it('invisible and control characters in a payload show as escapes, in the tree, the raw body and a header; emoji stay whole', async () => {
    const session = await openPage(browser, server);
    const { page } = session;
    const family = '\u{1f468}\u200d\u{1f469}\u200d\u{1f467}';
    const json = `{"note":"pay\u200b now","fill":"\u3164","soft":"a\u00adb","tag":"x\u{e0041}","emoji":"${family} \u2764\ufe0f"}`;
    const sent = await sendWebhook(server, 'payload-invisible', json, {
      'content-type': 'application/json',
      'x-sig': 'abc\u0085',
    });
    await row(page, sent.id).locator('a').click();
    const detail = page.locator('.detail');
    await detail.locator('.json-tree').waitFor();
    const tree = await detail.locator('.json-tree').innerText();
    expect(tree).toContain('"pay\\u200b now"');
    expect(tree).toContain('"\\u3164"');
    expect(tree).toContain('"a\\u00adb"');
    expect(tree).toContain('"x\\u{e0041}"');
    expect(tree).toContain(`"${family} \u2764\ufe0f"`);
    // A header value is bytes read as Latin-1: byte 0x85 is the C1 control U+0085.
    expect(await detail.locator('.headers-table tr', { hasText: 'x-sig' }).locator('td').innerText()).toBe('abc\\u0085');
    // Nothing unseen is left in the page's text but the joiners inside the emoji.
    const left = (await page.locator('#app').innerText()).replaceAll(family, '').replaceAll('\u2764\ufe0f', '');
    expect(
      [...left].filter((char) => /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/u.test(char) && !'\t\n'.includes(char)),
    ).toEqual([]);

    // Raw form data keeps its tab and line break; ESC and NEL show as escapes.
    const form = 'a=x\u001b[2J\u0085\ttab\nb=\u200b';
    const formSent = await sendWebhook(server, 'payload-invisible', form, {
      'content-type': 'application/x-www-form-urlencoded',
    });
    await row(page, formSent.id).locator('a').click();
    await page.locator(`.detail[data-id="${formSent.id}"]`).getByRole('tab', { name: 'Raw' }).click();
    await expect.poll(() => page.locator('.raw-body').innerText()).toBe('a=x\\u001b[2J\\u0085\ttab\nb=\\u200b');
    await assertNothingRan(session);
    await session.close();
  });

  it('in form data: keys and values in the table are text', async () => {
    const session = await openPage(browser, server);
    const { page } = session;
    const form = new URLSearchParams([
      [IMG('form-key'), SCRIPT('form-value')],
      ['b', '<b>bold</b>'],
    ]).toString();
    const sent = await sendWebhook(server, 'forms', form, { 'content-type': 'application/x-www-form-urlencoded' });
    await row(page, sent.id).locator('a').click();
    const cells = await page
      .locator('.form-table tbody tr')
      .evaluateAll((rows) => rows.map((r) => [r.children[0]?.textContent, r.children[1]?.textContent]));
    expect(cells).toEqual([
      [IMG('form-key'), SCRIPT('form-value')],
      ['b', '<b>bold</b>'],
    ]);
    expect(await page.locator('.form-table b').count()).toBe(0);
    await assertNothingRan(session);
    await session.close();
  });
});
