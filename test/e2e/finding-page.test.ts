import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RunningApp } from '../helpers/app.js';
import { skipBrowserTests, useBrowserAndServer } from '../helpers/browser.js';
import { openPage, row, sendWebhook, type Sent } from '../helpers/page.js';

/** CONTRACT 8 in the page: event types first in the list, search and filter chips in the address, delete by filter. */
describe.skipIf(skipBrowserTests)('finding deliveries in the page, in Chromium', () => {
  let browser: Browser;
  let server: RunningApp;
  useBrowserAndServer((b, s) => {
    browser = b;
    server = s;
  });

  async function send(source: string, body: unknown, headers: Record<string, string> = {}): Promise<Sent> {
    const sent = await sendWebhook(server, source, JSON.stringify(body), { 'content-type': 'application/json', ...headers });
    await server.app.index.caughtUp();
    return sent;
  }

  it('opens a shared search link with its filters as chips, the event type first in each row', async () => {
    const paid = await send('shop', { type: 'order.paid', note: 'needle one' });
    await send('shop', { type: 'order.paid', note: 'hay' });
    await send('shop', { type: 'refund.issued', note: 'needle two' });
    const sent = await send('shop', { type: 'order.sent', note: 'NEEDLE three' });
    const session = await openPage(browser, server, { hash: `#source=shop&eventType=${encodeURIComponent('order.*')}&q=needle` });
    const { page } = session;
    await row(page, sent.id).waitFor();
    const shown = await page.locator('.delivery-list li').evaluateAll((items) => items.map((li) => li.getAttribute('data-id')));
    expect(shown).toEqual([sent.id, paid.id]);
    expect(await row(page, paid.id).locator('.row-top > *').first().textContent()).toBe('order.paid');
    expect(await row(page, paid.id).locator('.row-type').textContent()).toBe('order.paid');
    const chips = await page
      .locator('.filter-chip')
      .evaluateAll((items) =>
        items.map((chip) => `${chip.getAttribute('data-filter') ?? ''}=${chip.querySelector('.chip-value')?.textContent ?? ''}`),
      );
    expect(chips).toEqual(['source=shop', 'eventType=order.*', 'q=needle']);
    expect(await page.getByLabel('Search deliveries').inputValue()).toBe('needle');
    // The types of the source, with their counts.
    const types = page.locator('.event-types .event-type');
    await expect.poll(() => types.count()).toBe(3);
    expect(await page.locator('.event-type[data-event-type="order.paid"] .source-count').textContent()).toBe('2');

    // Removing a chip changes the address and the list.
    await page.getByRole('button', { name: 'Remove the filter event type' }).click();
    await expect.poll(() => page.evaluate('location.hash')).toBe('#source=shop&q=needle');
    await expect.poll(() => page.locator('.delivery-list li').count()).toBe(3);
    // The one 401 is the page asking, before the login, whether its session cookie is good.
    expect(session.consoleErrors.filter((error) => !error.includes('status of 401'))).toEqual([]);
    expect(await session.violations()).toEqual([]);
    await session.close();
  });

  it('searches from the box, filters from the form and from an event type, each a link in the address', async () => {
    // The header's bytes are the UTF-8 of "ÄÖÜ" (fetch sends a string's characters as bytes, as HTTP does).
    const utf8 = Buffer.from('trace-ÄÖÜ-9', 'utf8').toString('latin1');
    const tagged = await send('desk', { type: 'ticket.opened', subject: 'Printer on fire' }, { 'X-Trace': utf8 });
    await send('desk', { type: 'ticket.closed', subject: 'Printer fixed' });
    const session = await openPage(browser, server, { hash: '#source=desk' });
    const { page } = session;
    await row(page, tagged.id).waitFor();
    // Fewer than three characters: a hint, nothing sent.
    await page.getByLabel('Search deliveries').fill('tr');
    await page.getByLabel('Search deliveries').press('Enter');
    await expect.poll(() => page.locator('.filter-hint').first().textContent()).toContain('at least 3 characters');
    // A header value, sent as UTF-8, found ignoring case.
    await page.getByLabel('Search deliveries').fill('TRACE-äöü');
    await page.getByLabel('Search deliveries').press('Enter');
    await expect.poll(() => page.evaluate('decodeURIComponent(location.hash)')).toBe('#source=desk&q=TRACE-äöü');
    await expect.poll(() => page.locator('.delivery-list li').count()).toBe(1);
    await page.getByRole('button', { name: 'Remove the filter text' }).click();
    await expect.poll(() => page.locator('.delivery-list li').count()).toBe(2);
    // An event type from the sources pane.
    await page.locator('.event-type[data-event-type="ticket.opened"]').click();
    await expect.poll(() => page.evaluate('location.hash')).toBe('#source=desk&eventType=ticket.opened');
    await expect.poll(() => page.locator('.delivery-list li').count()).toBe(1);
    // Verification from the form: nothing here is verified.
    await page.locator('.more-filters summary').click();
    await page.locator('select[name="verification"]').selectOption('verified');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.evaluate('location.hash')).toBe('#source=desk&eventType=ticket.opened&verification=verified');
    await expect.poll(() => page.locator('.list-footer .empty').textContent()).toBe('No deliveries match these filters.');
    await session.close();
  });

  it('deletes what the filters match after a confirmation that says how many, and nothing else', async () => {
    const doomed = [
      await send('purge', { type: 'test.event', n: 1 }),
      await send('purge', { type: 'test.event', n: 2 }),
      await send('purge', { type: 'test.event', n: 3 }),
    ];
    const kept = await send('purge', { type: 'real.event', n: 4 });
    const session = await openPage(browser, server, { hash: '#source=purge&eventType=test.event' });
    const { page } = session;
    await row(page, doomed[2]?.id ?? '').waitFor();
    await page.locator('[data-action="delete-matching"]').click();
    const confirm = page.getByRole('alertdialog', { name: 'Delete matching deliveries' });
    await expect
      .poll(() => confirm.locator('.confirm-text').textContent())
      .toBe('Delete 3 deliveries that match these filters? This cannot be undone.');
    // Cancel leaves everything; asking again and confirming deletes the three.
    await page.locator('[data-action="cancel-delete-matching"]').click();
    expect(await confirm.count()).toBe(0);
    await page.locator('[data-action="delete-matching"]').click();
    await page.locator('[data-action="confirm-delete-matching"]').click();
    await expect.poll(() => page.locator('.toast').last().textContent()).toBe('Deleted 3 deliveries.');
    await expect.poll(() => page.locator('.delivery-list li').count()).toBe(0);
    const left = (await (await fetch(`${server.url}/api/deliveries?source=purge`, { headers: server.auth })).json()) as {
      items: Array<{ id: string }>;
    };
    expect(left.items.map((item) => item.id)).toEqual([kept.id]);
    // Without a filter there is nothing to delete by.
    await page.evaluate("location.hash = '#'");
    await expect.poll(() => page.locator('[data-action="delete-matching"]').count()).toBe(0);
    expect(session.dialogs).toEqual([]);
    await session.close();
  });

  it('shows a hostile event type as text, never as markup', async () => {
    const hostile = '<img src=x onerror="window.__pwned=1">\u202eevil';
    const sent = await send('hostile-types', { type: hostile });
    const session = await openPage(browser, server, { hash: '#source=hostile-types' });
    const { page } = session;
    await row(page, sent.id).waitFor();
    expect(await row(page, sent.id).locator('.row-type').textContent()).toBe('<img src=x onerror="window.__pwned=1">\\u202eevil');
    await expect.poll(() => page.locator('.event-types .event-type').count()).toBe(1);
    expect(await page.locator('.delivery-list img, .event-types img, .filter-bar img').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    await page.locator('.event-types .event-type').first().click();
    await expect
      .poll(() => page.locator('.filter-chip[data-filter="eventType"] .chip-value').textContent())
      .toBe('<img src=x onerror="window.__pwned=1">\\u202eevil');
    await expect.poll(() => page.locator('.delivery-list li').count()).toBe(1);
    expect(await session.violations()).toEqual([]);
    await session.close();
  });
});
