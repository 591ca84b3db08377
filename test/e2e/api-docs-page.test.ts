import type { Browser, Request } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RunningApp } from '../helpers/app.js';
import { PAGE_CSP } from '../../src/page/web-page.js';
import { skipBrowserTests, useBrowserAndServer } from '../helpers/browser.js';

/** README "API docs": /docs renders the OpenAPI document with Swagger UI from this server only, under the page's policy. */
describe.skipIf(skipBrowserTests)('the API docs page in Chromium', () => {
  let browser: Browser;
  let server: RunningApp;
  useBrowserAndServer((b, s) => {
    browser = b;
    server = s;
  });

  it('renders every route of the OpenAPI document, with examples, and asks nothing of any other server', async () => {
    const openapi = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const context = await browser.newContext();
    const page = await context.newPage();
    const requests: string[] = [];
    page.on('request', (request: Request) => requests.push(request.url()));
    const violations: string[] = [];
    // Each violation of the Content-Security-Policy, as the page sees it (a string: the tests compile without the DOM's types).
    await page.addInitScript({
      content:
        "window.violations = []; document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.violatedDirective + ' ' + e.blockedURI));",
    });
    const response = await page.goto(`${server.url}/docs`);
    expect(response?.headers()['content-security-policy']).toBe(PAGE_CSP);
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });

    // Every operation of the document is on the page, by method and path.
    const shown = await page
      .locator('.opblock')
      .evaluateAll((blocks) =>
        blocks.map(
          (block) =>
            `${block.querySelector('.opblock-summary-method')?.textContent?.toLowerCase() ?? ''} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? ''}`,
        ),
      );
    const expected = Object.entries(openapi.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method} ${path}`),
    );
    expect(expected.length).toBeGreaterThan(15);
    expect(shown.sort()).toEqual(expected.sort());
    for (const route of ['post /api/webhook/{source}', 'get /api/deliveries', 'post /api/forwards/retry', 'get /api/sources']) {
      expect(shown).toContain(route);
    }

    // An operation opened shows its example, not a schema's placeholder values.
    await page.locator('#operations-inbox-listDeliveries').first().click();
    await expect
      .poll(() => page.locator('.opblock.is-open .example, .opblock.is-open .microlight').first().textContent())
      .toContain('"source": "github"');

    violations.push(...((await page.evaluate('window.violations')) as string[]));
    expect(violations).toEqual([]);
    const origin = new URL(server.url).origin;
    expect(requests.length).toBeGreaterThan(3);
    expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))).toEqual([]);
    await context.close();
  });

  it('serves the bundle and stylesheet from this server, and nothing else of the package', async () => {
    for (const [file, type] of [
      ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
      ['swagger-ui.css', 'text/css; charset=utf-8'],
      ['docs.js', 'text/javascript; charset=utf-8'],
    ]) {
      const answer = await fetch(`${server.url}/docs/assets/${file}`);
      expect(answer.status, file).toBe(200);
      expect(answer.headers.get('content-type')).toBe(type);
      expect(answer.headers.get('content-security-policy')).toBe(PAGE_CSP);
    }
    for (const file of [
      'package.json',
      'index.html',
      '..%2Fpackage.json',
      'swagger-initializer.js',
      'constructor',
      '__proto__',
    ]) {
      expect((await fetch(`${server.url}/docs/assets/${file}`)).status, file).toBe(404);
    }
  });
});
