// The inbox once logged in: top bar, sources, the live list and the open
// delivery. This file wires them together; each part draws itself.

import { getDelivery, listDeliveries, logOut, Unauthorized, type Delivery } from './api.ts';
import { cursorBefore } from './cursor.ts';
import { DeliveryList } from './delivery-list.ts';
import { renderDetail, renderNoDetail } from './detail-view.ts';
import { DestinationsView } from './destinations-view.ts';
import { RefusalsView } from './refusals-view.ts';
import { button, h, replaceChildren } from './dom.ts';
import { followRowBadges } from './forward-badges.ts';
import { relativeTime } from './format.ts';
import { bindListKeys } from './keyboard.ts';
import { LiveStream, type LiveState } from './live-stream.ts';
import { go, readRoute, routeHref } from './route.ts';
import { sourceName } from './source-name.ts';
import { SourcesPanel } from './sources-panel.ts';
import { TrafficChart } from './traffic-chart.ts';
import { toast } from './toast.ts';

const LIVE_LABELS: Record<LiveState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  offline: 'Offline',
};

function report(error: unknown): void {
  if (error instanceof Unauthorized) return; // the login form is already back
  toast((error as Error).message, 'error');
}

export class InboxView {
  private readonly shell: HTMLElement;
  private readonly list: DeliveryList;
  private readonly sources: SourcesPanel;
  private readonly detailPane: HTMLElement;
  private readonly listTitle: HTMLElement;
  private readonly liveBadge: HTMLElement;
  private readonly findInput: HTMLInputElement;
  private readonly stream: LiveStream;
  private readonly destinations = new DestinationsView();
  private readonly refusals = new RefusalsView();
  private readonly traffic = new TrafficChart();
  private readonly cleanups: Array<() => void> = [];
  private filter: string | undefined;
  private openId: string | undefined;
  private cursor: string | null = null;
  private generation = 0;

  constructor(
    private readonly root: HTMLElement,
    private readonly onLoggedOut: () => void,
  ) {
    this.list = new DeliveryList({
      hrefFor: (id) => routeHref({ source: this.filter, id }),
      onLoadOlder: () => void this.loadOlder().catch(report),
      onTrimmed: (oldest) => {
        this.cursor = cursorBefore(oldest.seq);
      },
    });
    this.sources = new SourcesPanel({ hrefFor: (source) => routeHref({ source }), onError: report });
    this.detailPane = h('section', { class: 'detail-pane', attrs: { 'aria-label': 'Delivery' } });
    this.listTitle = h('h2', { class: 'pane-title' });
    this.liveBadge = h('span', { class: 'live', attrs: { 'data-state': 'connecting', role: 'status' } }, LIVE_LABELS.connecting);
    this.findInput = h('input', {
      attrs: {
        type: 'search',
        name: 'id',
        placeholder: 'Find by id',
        'aria-label': 'Find a delivery by id',
        autocomplete: 'off',
        spellcheck: 'false',
      },
    });
    const find = h(
      'form',
      { class: 'find', attrs: { role: 'search' } },
      this.findInput,
      h('button', { class: 'button', attrs: { type: 'submit' } }, 'Find'),
    );
    find.addEventListener('submit', (event) => {
      event.preventDefault();
      const id = this.findInput.value.trim();
      if (id !== '') go({ source: this.filter, id });
    });
    this.shell = h(
      'div',
      { class: 'shell' },
      h(
        'header',
        { class: 'topbar' },
        h('h1', { class: 'brand' }, h('a', { attrs: { href: '#' } }, 'Reception')),
        this.liveBadge,
        find,
        this.refusals.toggle,
        this.destinations.toggle,
        button('Log out', () => void this.logOut(), 'button quiet', { 'data-action': 'logout' }),
      ),
      h(
        'div',
        { class: 'panes' },
        this.sources.element,
        h(
          'section',
          { class: 'list-pane', attrs: { 'aria-label': 'Deliveries' } },
          h('div', { class: 'pane-head' }, this.listTitle),
          this.traffic.element,
          this.list.element,
        ),
        this.detailPane,
      ),
      this.destinations.element,
      this.refusals.element,
    );
    // The two panels take the same place: opening one closes the other.
    this.refusals.toggle.addEventListener('click', () => this.destinations.close());
    this.destinations.toggle.addEventListener('click', () => this.refusals.close());
    this.stream = new LiveStream({
      onDelivery: (delivery) => this.arrived(delivery),
      onState: (state) => {
        this.liveBadge.dataset.state = state;
        this.liveBadge.textContent = LIVE_LABELS[state];
      },
    });
  }

  async start(): Promise<void> {
    replaceChildren(this.root, this.shell);
    renderNoDetail(this.detailPane);
    const onHash = (): void => void this.applyRoute().catch(report);
    window.addEventListener('hashchange', onHash);
    this.cleanups.push(() => window.removeEventListener('hashchange', onHash));
    this.cleanups.push(
      bindListKeys({
        move: (delta) => this.list.move(delta),
        openCurrent: () => this.list.openCurrent(),
        close: () => {
          if (this.openId !== undefined) go({ source: this.filter });
        },
        focusFind: () => this.findInput.focus(),
      }),
    );
    const tick = setInterval(() => {
      for (const time of this.root.querySelectorAll<HTMLElement>('[data-relative]')) {
        time.textContent = relativeTime(time.dataset.relative ?? '');
      }
    }, 15_000);
    this.cleanups.push(() => clearInterval(tick));
    this.cleanups.push(
      followRowBadges(this.list.element),
      () => this.destinations.close(),
      () => this.refusals.close(),
    );

    // The stream starts right after the newest delivery there is now; anything
    // newer arrives through it, and the list below is de-duplicated by id.
    const newest = await listDeliveries({ limit: 1 });
    this.stream.start(newest.items[0]?.seq ?? 0);
    const route = readRoute();
    this.filter = route.source;
    this.sources.setActive(this.filter);
    this.refusals.setSource(this.filter);
    this.traffic.setSource(this.filter);
    // Counts can be one off for a delivery that arrives between these reads
    // and the stream's start (counted by both, or by neither); a search or a
    // reload reads them again.
    await Promise.all([this.loadList(), this.sources.load()]);
    await this.open(route.id);
  }

  stop(): void {
    this.stream.stop();
    this.sources.stop();
    this.traffic.stop();
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }

  private async applyRoute(): Promise<void> {
    const route = readRoute();
    if (route.source !== this.filter) {
      this.filter = route.source;
      this.sources.setActive(this.filter);
      this.refusals.setSource(this.filter);
      this.traffic.setSource(this.filter);
      await this.loadList();
    }
    if (route.id !== this.openId) await this.open(route.id);
  }

  private async loadList(): Promise<void> {
    const generation = ++this.generation;
    if (this.filter === undefined) replaceChildren(this.listTitle, 'All deliveries');
    else replaceChildren(this.listTitle, 'From ', sourceName(this.filter));
    this.list.setLoading();
    const page = await listDeliveries(this.filter === undefined ? {} : { source: this.filter });
    if (generation !== this.generation) return;
    this.cursor = page.nextCursor;
    this.list.reset(page.items, page.nextCursor, this.filter);
    this.list.select(this.openId);
  }

  private async loadOlder(): Promise<void> {
    if (this.cursor === null) return;
    const generation = this.generation;
    // The list trims no rows while this page is on its way (delivery-list.ts), so it joins without a gap.
    this.list.setLoading();
    let page: Awaited<ReturnType<typeof listDeliveries>>;
    try {
      page = await listDeliveries({ ...(this.filter === undefined ? {} : { source: this.filter }), cursor: this.cursor });
    } catch (error) {
      // The button comes back, and the list may trim again.
      if (generation === this.generation) this.list.addPage([], this.cursor);
      throw error;
    }
    if (generation !== this.generation) return;
    this.cursor = page.nextCursor;
    this.list.addPage(page.items, page.nextCursor);
  }

  private arrived(delivery: Delivery): void {
    if (this.filter === undefined || delivery.source === this.filter) this.list.prepend(delivery);
    // Counted in place: the sources are not fetched again for an arrival.
    this.sources.arrived(delivery);
    this.traffic.arrived(delivery.source, delivery.receivedAt);
  }

  private async open(id: string | undefined): Promise<void> {
    this.openId = id;
    this.list.select(id);
    if (id === undefined) {
      this.shell.classList.remove('showing-detail');
      renderNoDetail(this.detailPane);
      return;
    }
    this.shell.classList.add('showing-detail');
    const delivery = this.list.get(id) ?? (await getDelivery(id));
    if (this.openId !== id) return;
    if (delivery === undefined) {
      renderNoDetail(this.detailPane, 'No delivery has that id. It may have been deleted.');
      toast('No delivery has that id.', 'error');
      return;
    }
    renderDetail(this.detailPane, delivery, {
      onDeleted: (deleted) => {
        const next = this.list.remove(deleted);
        go({ source: this.filter, id: next }, true);
        this.sources.removed(delivery.source);
      },
      onBack: () => go({ source: this.filter }),
    });
    this.detailPane.scrollTop = 0;
  }

  private async logOut(): Promise<void> {
    this.stop();
    await logOut();
    history.replaceState(null, '', location.pathname);
    this.onLoggedOut();
  }
}
