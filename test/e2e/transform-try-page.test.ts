import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { ConfigFile } from '../../src/config/source-config-schema.js';
import { transformDefinitions, transformUsers } from '../../src/config/transform-config.js';
import type { RunningApp } from '../helpers/app.js';
import { describeViolations, runAxe, severe } from '../helpers/axe.js';
import { launchChromium, skipBrowserTests } from '../helpers/browser.js';
import { startWithConfig } from '../helpers/configured-app.js';
import { readJson } from '../helpers/exchange.js';
import { openPage, sendWebhook, type PageSession } from '../helpers/page.js';
import { ensureWebBuilt } from '../helpers/web-build.js';

const HOSTILE_BODY = '<img src=x onerror=alert(2)><script>alert(3)</script>';
const HOSTILE_LOG = '<img src=x onerror=alert(1)>';

const CONFIG: ConfigFile = {
  destinations: { chat: { url: 'https://hooks.example.com/chat' }, archive: { url: 'https://archive.example.com/in' } },
  transforms: {
    slack: {
      code:
        'export default (e) => {\n  console.log("paid", e.body.id);\n' +
        '  return e.body.type === "invoice.draft" ? null : { body: { text: `${e.body.type} ${e.body.id}` }, headers: { "x-kind": "invoice" } };\n}',
    },
    thrower: {
      code: 'export default function (event) {\n  console.log("before");\n  throw new Error("no amount on " + event.body.id);\n}',
    },
    hostile: {
      code: `export default () => { console.log(${JSON.stringify(HOSTILE_LOG)}); return { body: ${JSON.stringify(HOSTILE_BODY)}, headers: { "x-h": "<b>bold</b>" } }; }`,
    },
  },
  sources: {
    stripe: {
      eventType: { body: 'type' },
      forward: [
        { to: 'chat', transform: 'slack' },
        { to: 'archive', transform: 'thrower' },
      ],
    },
    evil: { forward: [{ to: 'chat', transform: 'hostile' }] },
    plain: { forward: [{ to: 'chat' }] },
  },
};

/**
 * Issue 32, the page's part of "Try it" (CONTRACT 10): a delivery's detail
 * offers each of its source's routes that has a transform; a try shows the
 * output (body, headers added, console lines, time, version), a drop, or the
 * error, all as text.
 */
describe.skipIf(skipBrowserTests)('trying a transform from the detail, in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser;
  let server: RunningApp;
  let session: PageSession | undefined;

  beforeAll(async () => {
    await ensureWebBuilt();
    browser = await launchChromium();
    // No destinations given to the app: nothing is forwarded, the routes only name their transforms.
    server = await startWithConfig(CONFIG, {
      transforms: { definitions: transformDefinitions(CONFIG), users: transformUsers(CONFIG) },
    });
  }, 120_000);
  afterAll(async () => {
    await browser.close();
    await server.close();
  });
  afterEach(async () => {
    if (session === undefined) return;
    expect(await session.violations()).toEqual([]);
    expect(session.dialogs).toEqual([]);
    // The page's first read, before the login, is a 401.
    expect(session.consoleErrors.filter((e) => !e.includes('401'))).toEqual([]);
    await session.close();
    session = undefined;
  });

  const section = (page: Page) => page.locator('section.transform-try');
  const tryButton = (page: Page, name: string) => section(page).getByRole('button', { name, exact: true });
  const result = (page: Page, transform: string) =>
    section(page).locator(`.transform-route[data-transform="${transform}"] .transform-result`);

  async function open(source: string, body: string, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
    const { id } = await sendWebhook(server, source, body);
    session = await openPage(browser, server, { hash: `#id=${id}`, colorScheme });
    await session.page.locator(`article.detail[data-id="${id}"]`).waitFor({ timeout: 5000 });
    await session.page.locator('section.transform-try[data-routes]').waitFor({ state: 'attached', timeout: 5000 });
    return session.page;
  }

  it("runs a route's transform on the delivery: the JSON body, the headers it adds, the console line, the time and the version", async () => {
    const page = await open('stripe', '{"id":"in_1","type":"invoice.paid"}');
    expect(await section(page).getByRole('heading', { name: 'Try a transform' }).isVisible()).toBe(true);
    const buttons = section(page).getByRole('button');
    expect(await buttons.allTextContents()).toEqual(['Try slack (to chat)', 'Try thrower (to archive)']);

    await tryButton(page, 'Try slack (to chat)').click();
    const shown = result(page, 'slack');
    await shown.waitFor({ timeout: 5000 });
    expect(await shown.getAttribute('data-outcome')).toBe('output');
    expect(await shown.locator('pre.transform-body').textContent()).toBe(JSON.stringify({ text: 'invoice.paid in_1' }, null, 2));
    expect(await shown.locator('.transform-headers tbody tr').allTextContents()).toEqual(['x-kindinvoice']);
    expect(await shown.locator('.transform-logs li').allTextContents()).toEqual(['paid in_1']);
    const { items } = await readJson<{ items: Array<{ name: string; version: string }> }>(server, '/api/transforms');
    expect(await shown.locator('.transform-version').textContent()).toBe(items.find((t) => t.name === 'slack')?.version);
    expect(await shown.locator('.transform-duration').textContent()).toMatch(/^\d+(\.\d+)? ms$/);
  });

  it('a transform that throws shows its error and the lines it logged before', async () => {
    const page = await open('stripe', '{"id":"in_2","type":"invoice.paid"}');
    await tryButton(page, 'Try thrower (to archive)').click();
    const shown = result(page, 'thrower');
    await shown.waitFor({ timeout: 5000 });
    expect(await shown.getAttribute('data-outcome')).toBe('failed');
    expect(await shown.locator('.transform-error-text').textContent()).toBe('Error: no amount on in_2 (line 3)');
    expect(await shown.locator('.transform-logs li').allTextContents()).toEqual(['before']);
    expect(await shown.locator('pre.transform-body').count()).toBe(0);
    // The other route's result area stays empty: each button shows its own run.
    expect(await result(page, 'slack').count()).toBe(0);
  });

  it('a transform that returns null says the delivery is dropped on that route', async () => {
    const page = await open('stripe', '{"id":"in_3","type":"invoice.draft"}');
    await tryButton(page, 'Try slack (to chat)').click();
    const shown = result(page, 'slack');
    await shown.waitFor({ timeout: 5000 });
    expect(await shown.getAttribute('data-outcome')).toBe('dropped');
    expect(await shown.locator('.transform-dropped').textContent()).toContain('dropped (the transform returned null)');
    expect(await shown.locator('.transform-logs li').allTextContents()).toEqual(['paid in_3']);
  });

  it('a source whose routes have no transform shows no section; the list of transforms is read once, not per delivery', async () => {
    const other = await sendWebhook(server, 'plain', '{"n":1}');
    const page = await open('plain', '{"n":2}');
    expect(await section(page).getAttribute('data-routes')).toBe('0');
    expect(await section(page).isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: /^Try / }).count()).toBe(0);

    await page.locator(`.delivery-list li[data-id="${other.id}"]`).click();
    await page.locator(`article.detail[data-id="${other.id}"] section.transform-try[data-routes="0"]`).waitFor({
      state: 'attached',
      timeout: 5000,
    });
    const reads = session?.requests.filter((url) => new URL(url).pathname === '/api/transforms') ?? [];
    expect(reads).toHaveLength(1);
  });

  it('hostile output, headers and console lines are shown as text, never run', async () => {
    const page = await open('evil', '{"x":1}');
    await tryButton(page, 'Try hostile (to chat)').click();
    const shown = result(page, 'hostile');
    await shown.waitFor({ timeout: 5000 });
    expect(await shown.locator('pre.transform-body').textContent()).toBe(HOSTILE_BODY);
    expect(await shown.locator('pre.transform-body').getAttribute('data-kind')).toBe('text');
    expect(await shown.locator('.transform-logs li').allTextContents()).toEqual([HOSTILE_LOG]);
    expect(await shown.locator('.transform-headers tbody td').allTextContents()).toEqual(['<b>bold</b>']);
    expect(await page.locator('.transform-try img, .transform-try script, .transform-try b').count()).toBe(0);
  });

  for (const theme of ['light', 'dark'] as const) {
    it(`axe finds nothing serious in the section with an output and an error shown (${theme})`, async () => {
      const page = await open('stripe', '{"id":"in_4","type":"invoice.paid"}', theme);
      await tryButton(page, 'Try slack (to chat)').click();
      await tryButton(page, 'Try thrower (to archive)').click();
      await result(page, 'slack').waitFor({ timeout: 5000 });
      await result(page, 'thrower').waitFor({ timeout: 5000 });
      const all = await runAxe(page);
      const violations = [
        ...severe(all),
        ...all.filter((v) => ['heading-order', 'landmark-unique', 'empty-table-header', 'aria-allowed-role'].includes(v.id)),
      ];
      expect(violations, describeViolations(violations)).toEqual([]);
    });
  }
});
