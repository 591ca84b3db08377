// The sources: each with its count and when it last received, as links that
// filter the list. Most recently active first.

import type { SourceSummary } from './api.ts';
import { h, replaceChildren } from './dom.ts';
import { formatTime, relativeTime } from './format.ts';

export class SourcesPanel {
  readonly element: HTMLElement;
  private readonly list: HTMLUListElement;
  private sources: SourceSummary[] = [];
  private active: string | undefined;

  constructor(private readonly hrefFor: (source: string | undefined) => string) {
    this.list = h('ul', { class: 'source-list' });
    this.element = h('nav', { class: 'sources', attrs: { 'aria-label': 'Sources' } },
      h('h2', { class: 'pane-title' }, 'Sources'), this.list);
  }

  update(sources: SourceSummary[]): void {
    this.sources = [...sources].sort((a, b) => b.lastReceivedAt.localeCompare(a.lastReceivedAt) || a.source.localeCompare(b.source));
    this.render();
  }

  setActive(source: string | undefined): void {
    this.active = source;
    this.render();
  }

  private render(): void {
    const total = this.sources.reduce((sum, s) => sum + s.count, 0);
    const items = [this.item(undefined, 'All sources', total, undefined)];
    for (const s of this.sources) items.push(this.item(s.source, s.source, s.count, s.lastReceivedAt));
    if (this.active !== undefined && !this.sources.some((s) => s.source === this.active)) {
      items.push(this.item(this.active, this.active, 0, undefined));
    }
    replaceChildren(this.list, ...items);
  }

  private item(source: string | undefined, label: string, count: number, lastReceivedAt: string | undefined): HTMLLIElement {
    const current = source === this.active;
    return h('li', {},
      h('a', {
        class: source === undefined ? 'source all' : 'source',
        attrs: { href: this.hrefFor(source), ...(current ? { 'aria-current': 'true' } : {}), ...(source === undefined ? {} : { 'data-source': source }) },
      },
      h('span', { class: 'source-name' }, label),
      h('span', { class: 'source-count', attrs: { title: `${count} deliveries` } }, count.toLocaleString()),
      lastReceivedAt === undefined
        ? null
        : h('time', {
          class: 'source-seen',
          attrs: { datetime: lastReceivedAt, title: `last received ${formatTime(lastReceivedAt)}`, 'data-relative': lastReceivedAt },
        }, relativeTime(lastReceivedAt))));
  }
}
