// The sources: each with its count and when it last received, as links that
// filter the list. By name, a page at a time (GET /api/sources), with a
// search box, and never more than MAX_SHOWN rows: 50,000 sources made the
// page 250,000 DOM nodes and held its main thread for seconds (issue 16).
// Deliveries from the live stream change the counts in place and insert a
// new source where it belongs; nothing is fetched again for them.

import { listSources, type Delivery, type SourcePage, type SourceSummary } from './api.ts';
import { compareNames, cursorAfterName } from './cursor.ts';
import { button, h, replaceChildren } from './dom.ts';
import { relativeTime, timeTitle } from './format.ts';
import { sourceName } from './source-name.ts';
import { countDelivery, firstSparkline, sparkline } from './traffic-chart.ts';

/** Sources per request. */
export const SOURCE_PAGE = 100;
/** Rows shown at most; past it, the search finds the others. */
export const MAX_SHOWN = 200;
const SEARCH_DELAY_MS = 200;

interface Row {
  summary: SourceSummary;
  item: HTMLLIElement;
  count: HTMLElement;
  seen: HTMLTimeElement;
  /** The last 24 hours (traffic-chart.ts): three nodes a row, redrawn in place. */
  spark: SVGSVGElement | undefined;
}

export interface SourcesPanelOptions {
  hrefFor(source: string | undefined): string;
  onError(error: unknown): void;
}

export class SourcesPanel {
  readonly element: HTMLElement;
  private readonly list: HTMLUListElement;
  private readonly footer: HTMLElement;
  private readonly searchInput: HTMLInputElement;
  private readonly allLink: HTMLAnchorElement;
  private readonly allCount: HTMLElement;
  private readonly rows = new Map<string, Row>();
  /** The names shown, in order: the first ones of the search, with nothing left out between them. */
  private names: string[] = [];
  /** Where the next page starts; null when every match is shown. */
  private nextCursor: string | null = null;
  private query = '';
  /** Deliveries of every source, known once every source has been shown at the same time. */
  private total: number | undefined;
  private active: string | undefined;
  private pinned: HTMLLIElement | undefined;
  private generation = 0;
  private loading = false;
  private searchTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly options: SourcesPanelOptions) {
    this.allCount = h('span', { class: 'source-count' });
    this.allLink = h(
      'a',
      { class: 'source all', attrs: { href: options.hrefFor(undefined) } },
      h('span', { class: 'source-name' }, 'All sources'),
      this.allCount,
    );
    this.list = h('ul', { class: 'source-list' }, h('li', {}, this.allLink));
    this.footer = h('div', { class: 'sources-footer' });
    this.searchInput = h('input', {
      attrs: {
        type: 'search',
        name: 'q',
        placeholder: 'Search sources',
        'aria-label': 'Search sources',
        autocomplete: 'off',
        spellcheck: 'false',
      },
    });
    const search = h(
      'form',
      { class: 'source-search', attrs: { role: 'search', 'aria-label': 'Source search' } },
      this.searchInput,
    );
    search.addEventListener('submit', (event) => {
      event.preventDefault();
      this.searchNow();
    });
    this.searchInput.addEventListener('input', () => {
      if (this.searchTimer !== undefined) clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => this.searchNow(), SEARCH_DELAY_MS);
    });
    this.element = h(
      'nav',
      { class: 'sources', attrs: { 'aria-label': 'Sources' } },
      h('h2', { class: 'pane-title' }, 'Sources'),
      search,
      this.list,
      this.footer,
    );
  }

  /** Shows the first page of the search in the box (of every source when it is empty). */
  async load(): Promise<void> {
    const generation = ++this.generation;
    const query = this.query;
    this.loading = true;
    this.renderFooter();
    let page: SourcePage;
    try {
      page = await listSources({ limit: SOURCE_PAGE, traffic: '24h', ...(query === '' ? {} : { q: query }) });
    } finally {
      if (generation === this.generation) {
        this.loading = false;
        this.renderFooter();
      }
    }
    if (generation !== this.generation) return;
    for (const row of this.rows.values()) row.item.remove();
    this.rows.clear();
    this.names = [];
    this.addPage(page);
    if (query === '') this.total = page.nextCursor === null ? page.items.reduce((sum, s) => sum + s.count, 0) : undefined;
    this.renderTotal();
  }

  stop(): void {
    if (this.searchTimer !== undefined) clearTimeout(this.searchTimer);
    this.generation++;
  }

  setActive(source: string | undefined): void {
    if (this.active !== undefined) this.rows.get(this.active)?.item.firstElementChild?.removeAttribute('aria-current');
    this.allLink.removeAttribute('aria-current');
    this.active = source;
    if (source === undefined) this.allLink.setAttribute('aria-current', 'true');
    else this.rows.get(source)?.item.firstElementChild?.setAttribute('aria-current', 'true');
    this.renderPinned();
  }

  /** A delivery from the live stream: its source counts one more, and shows up if it is new and belongs in view. */
  arrived(delivery: Delivery): void {
    if (this.total !== undefined) {
      this.total += 1;
      this.renderTotal();
    }
    const row = this.rows.get(delivery.source);
    if (row !== undefined) {
      row.summary.count += 1;
      if (delivery.receivedAt > row.summary.lastReceivedAt) row.summary.lastReceivedAt = delivery.receivedAt;
      if (row.summary.traffic !== undefined) countDelivery(row.summary.traffic, delivery.receivedAt);
      this.renderRow(row);
      return;
    }
    this.insert({
      source: delivery.source,
      count: 1,
      lastReceivedAt: delivery.receivedAt,
      traffic: firstSparkline(delivery.receivedAt),
    });
  }

  /** A delivery deleted from this page. */
  removed(source: string): void {
    if (this.total !== undefined) {
      this.total -= 1;
      this.renderTotal();
    }
    const row = this.rows.get(source);
    if (row === undefined) return;
    row.summary.count -= 1;
    if (row.summary.count > 0) {
      this.renderRow(row);
      return;
    }
    row.item.remove();
    this.rows.delete(source);
    this.names.splice(this.names.indexOf(source), 1);
    this.renderPinned();
    this.renderFooter();
  }

  private searchNow(): void {
    if (this.searchTimer !== undefined) clearTimeout(this.searchTimer);
    this.searchTimer = undefined;
    const query = this.searchInput.value.trim();
    if (query === this.query && !this.loading) return;
    this.query = query;
    void this.load().catch((error: unknown) => this.options.onError(error));
  }

  private async more(): Promise<void> {
    const cursor = this.nextCursor;
    if (cursor === null || this.loading) return;
    const generation = this.generation;
    this.loading = true;
    this.renderFooter();
    let page: SourcePage;
    try {
      page = await listSources({ limit: SOURCE_PAGE, cursor, traffic: '24h', ...(this.query === '' ? {} : { q: this.query }) });
    } finally {
      if (generation === this.generation) {
        this.loading = false;
        this.renderFooter();
      }
    }
    // A new search started meanwhile: this page no longer follows on. (Nothing
    // is inserted or let go of while a page is on its way: see insert.)
    if (generation !== this.generation) return;
    this.addPage(page);
  }

  /** Appends a page that follows the last row shown. */
  private addPage(page: SourcePage): void {
    let nextCursor = page.nextCursor;
    for (const summary of page.items) {
      if (this.rows.has(summary.source)) continue;
      if (this.names.length >= MAX_SHOWN) {
        nextCursor = cursorAfterName(this.names[this.names.length - 1] ?? '');
        break;
      }
      const row = this.row(summary);
      this.list.appendChild(row.item);
      this.rows.set(summary.source, row);
      this.names.push(summary.source);
    }
    this.nextCursor = nextCursor;
    this.renderPinned();
    this.renderFooter();
  }

  /** A source not shown yet: in its place among the rows, when that place is in view. */
  private insert(summary: SourceSummary): void {
    if (this.loading) return; // the page on its way is read after the delivery, or a reload shows it
    if (this.query !== '' && !summary.source.toLowerCase().includes(this.query.toLowerCase())) return;
    const last = this.names[this.names.length - 1];
    if (this.nextCursor !== null && (last === undefined || compareNames(summary.source, last) > 0)) return;
    let index = this.names.length;
    while (index > 0 && compareNames(this.names[index - 1] ?? '', summary.source) > 0) index--;
    const row = this.row(summary);
    const after = this.rows.get(this.names[index] ?? '');
    this.list.insertBefore(row.item, after?.item ?? null);
    this.rows.set(summary.source, row);
    this.names.splice(index, 0, summary.source);
    if (this.names.length > MAX_SHOWN) {
      // Let go of the last row: "Show more" starts after the new last one.
      const dropped = this.names.pop() ?? '';
      this.rows.get(dropped)?.item.remove();
      this.rows.delete(dropped);
      this.nextCursor = cursorAfterName(this.names[this.names.length - 1] ?? '');
    }
    this.renderPinned();
    this.renderFooter();
  }

  private row(summary: SourceSummary): Row {
    const current = summary.source === this.active;
    const count = h('span', { class: 'source-count' });
    const seen = h('time', { class: 'source-seen' });
    const link = h(
      'a',
      {
        class: 'source',
        attrs: {
          href: this.options.hrefFor(summary.source),
          'data-source': summary.source,
          ...(current ? { 'aria-current': 'true' } : {}),
        },
      },
      h('span', { class: 'source-name' }, sourceName(summary.source)),
      count,
      seen,
    );
    const row: Row = { summary: structuredClone(summary), item: h('li', {}, link), count, seen, spark: undefined };
    this.renderRow(row);
    return row;
  }

  private renderRow(row: Row): void {
    const { count, lastReceivedAt } = row.summary;
    row.count.textContent = count.toLocaleString();
    row.count.title = `${count} deliveries`;
    row.seen.dateTime = lastReceivedAt;
    row.seen.title = `last received ${timeTitle(lastReceivedAt)}`;
    row.seen.dataset.relative = lastReceivedAt;
    row.seen.textContent = relativeTime(lastReceivedAt);
    const traffic = row.summary.traffic;
    const spark = traffic === undefined ? undefined : sparkline(traffic);
    if (spark !== undefined) row.seen.after(spark);
    row.spark?.remove();
    row.spark = spark;
  }

  private renderTotal(): void {
    this.allCount.textContent = this.total === undefined ? '' : this.total.toLocaleString();
    this.allCount.title = this.total === undefined ? '' : `${this.total} deliveries`;
  }

  /** The source the list is filtered by, right under "All sources" while it has no row of its own. */
  private renderPinned(): void {
    this.pinned?.remove();
    this.pinned = undefined;
    const active = this.active;
    if (active === undefined || this.rows.has(active)) return;
    this.pinned = h(
      'li',
      { class: 'pinned' },
      h(
        'a',
        {
          class: 'source',
          attrs: { href: this.options.hrefFor(active), 'aria-current': 'true', 'data-source': active },
        },
        h('span', { class: 'source-name' }, sourceName(active)),
      ),
    );
    this.list.insertBefore(this.pinned, this.allLink.parentElement?.nextSibling ?? null);
  }

  private renderFooter(): void {
    if (this.loading) replaceChildren(this.footer, h('p', { class: 'muted' }, 'Loading…'));
    else if (this.nextCursor !== null && this.names.length >= MAX_SHOWN) {
      replaceChildren(
        this.footer,
        h('p', { class: 'muted' }, `The first ${MAX_SHOWN.toLocaleString()} are shown; search to find the others.`),
      );
    } else if (this.nextCursor !== null) {
      replaceChildren(
        this.footer,
        button('Show more', () => void this.more().catch((error: unknown) => this.options.onError(error)), 'button quiet', {
          'data-action': 'more-sources',
        }),
      );
    } else if (this.names.length === 0 && this.query !== '') {
      replaceChildren(this.footer, h('p', { class: 'muted' }, 'No source name contains that.'));
    } else replaceChildren(this.footer);
  }
}
