import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from '../helpers/app.js';
import { skipBrowserTests, useBrowserAndServer } from '../helpers/browser.js';
import { openPage, row, sendWebhook, type Sent } from '../helpers/page.js';

const SHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

/** A few deliveries that look like what real providers send. */
async function seed(server: RunningApp): Promise<Sent[]> {
  const json = { 'content-type': 'application/json', 'user-agent': 'GitHub-Hookshot/1f3e2a9' };
  return [
    await sendWebhook(
      server,
      'stripe',
      JSON.stringify({
        id: 'evt_1QK8vJ2eZvKYlo2C',
        object: 'event',
        type: 'invoice.paid',
        livemode: false,
        data: { object: { id: 'in_1QK8vI2eZvKYlo2C', amount_paid: 4900, currency: 'usd', customer: 'cus_R3hT2', paid: true } },
      }),
      {
        'content-type': 'application/json; charset=utf-8',
        'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        'stripe-signature': 't=1732237323,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
      },
    ),
    await sendWebhook(server, 'twilio', 'From=%2B14155550100&To=%2B14155550199&Body=Is+my+order+on+its+way%3F&NumMedia=0', {
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': 'TwilioProxy/1.1',
    }),
    await sendWebhook(
      server,
      'shopify',
      JSON.stringify({
        id: 820982911946154500,
        email: 'jon@example.com',
        total_price: '199.00',
        line_items: [{ title: 'IPod Nano - 8GB', quantity: 1 }],
      }),
      {
        'content-type': 'application/json',
        'x-shopify-topic': 'orders/create',
        'x-shopify-shop-domain': 'example.myshopify.com',
      },
    ),
    await sendWebhook(server, 'github', JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 123456 }), {
      ...json,
      'x-github-event': 'ping',
    }),
    await sendWebhook(
      server,
      'github',
      JSON.stringify({
        ref: 'refs/heads/main',
        before: '6113728f27ae82c7b1a177c8d03f9e96e0adf246',
        after: '0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c',
        repository: { id: 1296269, full_name: 'octocat/Hello-World', private: false, default_branch: 'main' },
        pusher: { name: 'octocat', email: 'octocat@github.com' },
        commits: [{ id: '0d1a26e6', message: 'Update README.md', author: { name: 'Monalisa Octocat' } }],
      }),
      {
        ...json,
        'x-github-event': 'push',
        'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
        'x-hub-signature-256': 'sha256=d57c68ca6f92289e6987922ff26938930f6e66a2d161ef06abdf1859230aa23c',
      },
    ),
  ];
}

describe.skipIf(skipBrowserTests)('screenshots for the README', () => {
  let browser: Browser;
  let server: RunningApp;
  useBrowserAndServer((b, s) => {
    browser = b;
    server = s;
  });
  beforeAll(() => {
    mkdirSync(SHOTS, { recursive: true });
  });

  it('saves the list (docs/screenshots/list.png), a delivery (detail.png) and a source with its traffic (source.png)', async () => {
    const sent = await seed(server);
    const session = await openPage(browser, server, { viewport: { width: 1280, height: 760 } });
    const { page } = session;
    // One more arrives while the page is open: it is shown highlighted.
    const live = await sendWebhook(
      server,
      'stripe',
      JSON.stringify({ id: 'evt_1QK8wB2eZvKYlo2C', object: 'event', type: 'customer.subscription.updated' }),
    );
    await row(page, live.id).waitFor({ timeout: 1000 });
    await expect.poll(() => page.locator('.source[data-source="stripe"] .source-count').textContent()).toBe('2');
    expect(await page.locator('.delivery-list li').count()).toBe(sent.length + 1);
    await page.screenshot({ path: `${SHOTS}list.png` });

    const push = sent[sent.length - 1];
    if (push === undefined) throw new Error('nothing seeded');
    // Tall enough for the headers and, below them, the body's tree.
    await page.setViewportSize({ width: 1280, height: 1480 });
    await row(page, push.id).locator('a').click();
    await page.locator('.detail .json-tree').waitFor();
    await page.mouse.move(0, 0);
    await page.screenshot({ path: `${SHOTS}detail.png` });

    // A source's view: its traffic chart above its deliveries, and the sparklines beside the sources.
    await page.setViewportSize({ width: 1280, height: 760 });
    await page.locator('.source[data-source="stripe"]').first().click();
    await page.locator('.traffic-chart svg').first().waitFor();
    await page.mouse.move(0, 0);
    await page.screenshot({ path: `${SHOTS}source.png` });
    await session.close();
  });
});
