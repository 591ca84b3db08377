// The list of deliveries, newest first: live ones slide in at the top with a
// brief highlight, older ones come a page at a time through the cursor.
// Each row is a link to its detail, so Enter, clicks and Back all work.

import type { Delivery } from './api.ts';
import { copyText } from './clipboard.ts';
import { firstWebhookCommand } from './curl-command.ts';
import { button, h, replaceChildren } from './dom.ts';
import { forwardBadge } from './forward-badges.ts';
import { bodyPreview, formatSize, relativeTime, shortContentType, timeTitle } from './format.ts';
import { FILTER_NAMES, type Filters } from './route.ts';
import { sourceName } from './source-name.ts';
import { toast } from './toast.ts';

export interface ListOptions {
  /** The address of a delivery's detail. */
  hrefFor(id: string): string;
  /** Asks for the next, older page. */
  onLoadOlder(): void;
  /** Rows past the limit left the bottom of the list: older pages go on from this one, now the oldest shown. */
  onTrimmed(oldest: Delivery): void;
}

/**
 * Rows the list keeps, at least. Past this (or past what the reader loaded
 * with "Load older"), arrivals push the oldest rows out (they come back
 * with "Load older"): a page left open on a busy inbox stays fast. 10,000
 * rows held the main thread for up to 1.5 s at a time.
 */
export const MAX_ROWS = 1000;

export class DeliveryList {
  readonly element: HTMLElement;
  private readonly list: HTMLOListElement;
  private readonly footer: HTMLElement;
  private readonly rows = new Map<string, HTMLLIElement>();
  private readonly byId = new Map<string, Delivery>();
  private filters: Filters = {};
  private selected: string | undefined;
  private moreAvailable = false;
  private loading = false;
  /** Rows kept: MAX_ROWS, or as many as the reader asked for with "Load older". */
  private limit = MAX_ROWS;

  constructor(private readonly options: ListOptions) {
    this.list = h('ol', { class: 'delivery-list', attrs: { 'aria-label': 'Deliveries' } });
    this.footer = h('div', { class: 'list-footer' });
    this.element = h('div', { class: 'list-body' }, this.list, this.footer);
  }

  /** Starts over with the first page of what `filters` match. */
  reset(items: Delivery[], nextCursor: string | null, filters: Filters): void {
    this.filters = filters;
    this.limit = MAX_ROWS;
    this.rows.clear();
    this.byId.clear();
    replaceChildren(this.list);
    this.addPage(items, nextCursor);
  }

  /** Appends an older page. */
  addPage(items: Delivery[], nextCursor: string | null): void {
    for (const delivery of items) {
      if (this.rows.has(delivery.id)) continue;
      const row = this.row(delivery);
      this.list.appendChild(row);
    }
    this.moreAvailable = nextCursor !== null;
    this.loading = false;
    // What the reader loaded stays until newer rows outnumber it.
    this.limit = Math.max(this.limit, this.rows.size);
    this.renderFooter();
  }

  /** A delivery that just arrived: at the top, highlighted for a moment. */
  prepend(delivery: Delivery): void {
    if (this.rows.has(delivery.id)) return;
    const row = this.row(delivery);
    row.classList.add('fresh');
    row.addEventListener('animationend', () => row.classList.remove('fresh'), { once: true });
    this.list.insertBefore(row, this.list.firstChild);
    // Not while an older page is on its way: it goes on from the oldest row now.
    if (this.rows.size > this.limit && !this.loading) this.trim();
    this.renderFooter();
  }

  /** Drops the oldest rows down to the limit; older pages then go on from the oldest row kept. */
  private trim(): void {
    while (this.rows.size > this.limit) {
      const last = this.list.lastElementChild as HTMLElement | null;
      const id = last?.dataset.id;
      if (last === null || id === undefined) break;
      last.remove();
      this.rows.delete(id);
      this.byId.delete(id);
    }
    const oldestId = (this.list.lastElementChild as HTMLElement | null)?.dataset.id;
    const oldest = oldestId === undefined ? undefined : this.byId.get(oldestId);
    if (oldest === undefined) return;
    this.moreAvailable = true;
    this.options.onTrimmed(oldest);
  }

  /** Takes a deleted delivery out; answers the id of the row that took its place, if any. */
  remove(id: string): string | undefined {
    const row = this.rows.get(id);
    if (row === undefined) return undefined;
    const neighbour = (row.nextElementSibling ?? row.previousElementSibling) as HTMLElement | null;
    row.remove();
    this.rows.delete(id);
    this.byId.delete(id);
    this.renderFooter();
    return neighbour?.dataset.id;
  }

  get(id: string): Delivery | undefined {
    return this.byId.get(id);
  }

  get count(): number {
    return this.rows.size;
  }

  setLoading(): void {
    this.loading = true;
    this.renderFooter();
  }

  /** Marks the open delivery's row. */
  select(id: string | undefined): void {
    if (this.selected !== undefined) this.rows.get(this.selected)?.querySelector('a')?.removeAttribute('aria-current');
    this.selected = id;
    if (id !== undefined) this.rows.get(id)?.querySelector('a')?.setAttribute('aria-current', 'true');
  }

  /** Moves keyboard focus `delta` rows down (or up); past the end it loads the next page. */
  move(delta: number): void {
    const links = [...this.list.querySelectorAll<HTMLAnchorElement>('a.row')];
    if (links.length === 0) return;
    const active = document.activeElement;
    let index = links.findIndex((link) => link === active);
    if (index === -1 && this.selected !== undefined) index = links.findIndex((link) => link.dataset.id === this.selected);
    const next = index === -1 ? (delta > 0 ? 0 : links.length - 1) : index + delta;
    if (next >= links.length && this.moreAvailable && !this.loading) this.options.onLoadOlder();
    const target = links[Math.max(0, Math.min(links.length - 1, next))];
    target?.focus();
    target?.scrollIntoView({ block: 'nearest' });
  }

  /** Opens the open delivery's row again, or the first one (Enter with no row focused). */
  openCurrent(): void {
    const links = [...this.list.querySelectorAll<HTMLAnchorElement>('a.row')];
    (links.find((link) => link.dataset.id === this.selected) ?? links[0])?.click();
  }

  private row(delivery: Delivery): HTMLLIElement {
    this.byId.set(delivery.id, delivery);
    const status = delivery.verification.status;
    const link = h(
      'a',
      {
        class: 'row',
        attrs: { href: this.options.hrefFor(delivery.id), 'data-id': delivery.id },
      },
      h(
        'span',
        { class: 'row-top' },
        // The event type first: what happened, then who said so.
        delivery.eventType === null
          ? h('span', { class: 'row-type untyped' }, 'no type')
          : h('span', { class: 'row-type' }, delivery.eventType),
        h('span', { class: 'row-source' }, sourceName(delivery.source)),
        h(
          'time',
          {
            class: 'row-time',
            attrs: {
              datetime: delivery.receivedAt,
              title: timeTitle(delivery.receivedAt),
              'data-relative': delivery.receivedAt,
            },
          },
          relativeTime(delivery.receivedAt),
        ),
      ),
      h(
        'span',
        { class: 'row-meta' },
        forwardBadge(delivery.forwards),
        h('span', {
          class: `dot dot-${status}`,
          attrs: { title: status === 'none' ? 'unsigned: this source checks no signature' : `verification: ${status}` },
        }),
        `${shortContentType(delivery.contentType)} · ${formatSize(delivery.size)} · `,
        // The seq, not a piece of the id: short, unique, and taken by Find, the API and `replay` (a UUIDv7's start is its time).
        h('code', { class: 'row-seq', attrs: { title: `seq ${delivery.seq}, id ${delivery.id}` } }, `#${delivery.seq}`),
      ),
      h('span', { class: 'row-preview' }, bodyPreview(delivery.body)),
    );
    if (delivery.id === this.selected) link.setAttribute('aria-current', 'true');
    const item = h('li', { attrs: { 'data-id': delivery.id } }, link);
    this.rows.set(delivery.id, item);
    return item;
  }

  private renderFooter(): void {
    if (this.rows.size === 0) {
      const { source } = this.filters;
      const narrowed = FILTER_NAMES.some((name) => name !== 'source' && this.filters[name] !== undefined);
      replaceChildren(
        this.footer,
        narrowed
          ? h('p', { class: 'empty' }, 'No deliveries match these filters.')
          : source === undefined
            ? firstWebhookState()
            : h('p', { class: 'empty' }, 'No deliveries from ', h('strong', {}, sourceName(source)), ' yet.'),
      );
      return;
    }
    if (this.loading) replaceChildren(this.footer, h('p', { class: 'muted' }, 'Loading…'));
    else if (this.moreAvailable)
      replaceChildren(
        this.footer,
        button('Load older', () => this.options.onLoadOlder(), 'button', { 'data-action': 'load-older' }),
      );
    else replaceChildren(this.footer, h('p', { class: 'muted end' }, 'That is all of them.'));
  }
}

/** The empty inbox: how to send the first webhook to this very server. */
function firstWebhookState(): HTMLElement {
  const command = firstWebhookCommand(location.origin);
  return h(
    'div',
    { class: 'empty-state' },
    h('h2', {}, 'No webhooks yet'),
    h(
      'p',
      {},
      'Point a sender at ',
      h('code', {}, `${location.origin}/api/webhook/`, h('em', {}, 'source')),
      ', or send one from a terminal:',
    ),
    h('pre', { class: 'code first-curl' }, command),
    button('Copy', () => void copyText(command).then((ok) => toast(ok ? 'Copied.' : 'Select the line and copy it.')), 'button'),
    h('p', { class: 'muted' }, 'It shows up here the moment it arrives.'),
  );
}
