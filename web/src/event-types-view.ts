// The event types of the source the list shows, with their counts (GET
// /api/event-types), in the sources pane: each filters the list by that
// type. Deliveries from the live stream count one more in place.

import { listEventTypes, type Delivery, type EventTypeList } from './api.ts';
import { h, replaceChildren } from './dom.ts';
import { timeTitle } from './format.ts';

type EventTypeItem = EventTypeList['items'][number];

export interface EventTypesOptions {
  /** The address of the list filtered by this source and type. */
  hrefFor(source: string, eventType: string): string;
  onError(error: unknown): void;
}

export class EventTypesView {
  readonly element: HTMLElement;
  private readonly list: HTMLUListElement;
  private source: string | undefined;
  private active: string | undefined;
  private items: EventTypeItem[] = [];
  private generation = 0;

  constructor(private readonly options: EventTypesOptions) {
    this.list = h('ul', { class: 'event-type-list' });
    this.element = h(
      'section',
      { class: 'event-types', attrs: { 'aria-label': 'Event types', hidden: '' } },
      h('h2', { class: 'event-types-title' }, 'Event types'),
      this.list,
    );
  }

  /** Shows the types of `source` (none without one), `eventType` marked as the one in force. */
  async show(source: string | undefined, eventType: string | undefined): Promise<void> {
    this.active = eventType;
    if (source === this.source) {
      this.render();
      return;
    }
    this.source = source;
    const generation = ++this.generation;
    this.items = [];
    this.render();
    if (source === undefined) return;
    const types = await listEventTypes(source);
    if (generation !== this.generation) return;
    this.items = types.items;
    this.render();
  }

  /** A delivery from the live stream: one more of its type, when its source is the one shown. */
  arrived(delivery: Delivery): void {
    if (delivery.source !== this.source) return;
    const item = this.items.find((i) => i.eventType === delivery.eventType);
    if (item === undefined) {
      this.items.push({ source: delivery.source, eventType: delivery.eventType, count: 1, lastReceivedAt: delivery.receivedAt });
    } else {
      item.count += 1;
      if (delivery.receivedAt > item.lastReceivedAt) item.lastReceivedAt = delivery.receivedAt;
    }
    this.items.sort((a, b) => b.count - a.count);
    this.render();
  }

  /** Deliveries were deleted: the counts are read again. */
  reload(): void {
    const source = this.source;
    this.source = undefined;
    void this.show(source, this.active).catch((error: unknown) => this.options.onError(error));
  }

  private render(): void {
    this.element.hidden = this.source === undefined || this.items.length === 0;
    const source = this.source;
    if (source === undefined) {
      replaceChildren(this.list);
      return;
    }
    replaceChildren(
      this.list,
      ...this.items.map((item) => {
        const count = h(
          'span',
          { class: 'source-count', attrs: { title: `${item.count} deliveries` } },
          item.count.toLocaleString(),
        );
        const seen = `last received ${timeTitle(item.lastReceivedAt)}`;
        if (item.eventType === null) {
          return h(
            'li',
            { class: 'event-type untyped', attrs: { title: seen } },
            h('span', { class: 'event-type-name' }, 'no type'),
            count,
          );
        }
        const current = item.eventType === this.active;
        return h(
          'li',
          {},
          h(
            'a',
            {
              class: 'event-type',
              attrs: {
                href: this.options.hrefFor(source, item.eventType),
                title: seen,
                'data-event-type': item.eventType,
                ...(current ? { 'aria-current': 'true' } : {}),
              },
            },
            h('span', { class: 'event-type-name' }, item.eventType),
            count,
          ),
        );
      }),
    );
  }
}
