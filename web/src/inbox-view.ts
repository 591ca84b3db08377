// The inbox once logged in: top bar, sources, the live list and the open
// delivery. This file wires them together; each part draws itself.

import { getDelivery, listDeliveries, logOut, Unauthorized, type Delivery } from './api.ts';
import { cursorBefore } from './cursor.ts';
import { DeliveryList } from './delivery-list.ts';
import { renderDetail, renderNoDetail } from './detail-view.ts';
import { DestinationsView } from './destinations-view.ts';
import { RefusalsView } from './refusals-view.ts';
import { IssuesView } from './issues-view.ts';
import { button, h, replaceChildren } from './dom.ts';
import { followRowBadges } from './forward-badges.ts';
import { relativeTime } from './format.ts';
import { bindListKeys } from './keyboard.ts';
import { LiveStream, type LiveState } from './live-stream.ts';
import { EventTypesView } from './event-types-view.ts';
import { FilterBar } from './filter-bar.ts';
import { filtersOf, go, readRoute, routeHref, sameFilters, type Filters } from './route.ts';
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

/**
 * Whether a delivery from the live stream belongs in the list under these
 * filters. A search (`q`) looks at the raw body, which the stream does not
 * carry: while one is in force, arrivals are not added (the list says so).
 */
function matchesLive(delivery: Delivery, filters: Filters): boolean {
  if (filters.q !== undefined) return false;
  if (filters.source !== undefined && delivery.source !== filters.source) return false;
  const type = filters.eventType;
  if (type !== undefined) {
    const own = delivery.eventType;
    if (own === null) return false;
    if (type.endsWith('*') ? !own.startsWith(type.slice(0, -1)) : own !== type) return false;
  }
  if (filters.verification !== undefined && delivery.verification.status !== filters.verification) return false;
  const received = Date.parse(delivery.receivedAt);
  if (filters.since !== undefined && received < Date.parse(filters.since)) return false;
  if (filters.until !== undefined && received >= Date.parse(filters.until)) return false;
  return true;
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
  private readonly issues = new IssuesView({
    sourceHref: (source) => routeHref({ source }),
    showDestination: (name) => {
      this.refusals.close();
      this.destinations.reveal(name);
    },
    deliveryHref: (id) => routeHref({ ...this.filters, id }),
    failedVerificationHref: (source) => routeHref({ source, verification: 'failed' }),
    showRefusals: (source) => {
      this.destinations.close();
      go({ source });
      this.refusals.setSource(source);
      this.refusals.open();
    },
  });
  private readonly filterBar: FilterBar;
  private readonly eventTypes: EventTypesView;
  private readonly searchNote: HTMLElement;
  private readonly traffic = new TrafficChart();
  private readonly cleanups: Array<() => void> = [];
  private filters: Filters = {};
  private openId: string | undefined;
  private cursor: string | null = null;
  private generation = 0;

  constructor(
    private readonly root: HTMLElement,
    private readonly onLoggedOut: () => void,
  ) {
    this.list = new DeliveryList({
      hrefFor: (id) => routeHref({ ...this.filters, id }),
      onLoadOlder: () => void this.loadOlder().catch(report),
      onTrimmed: (oldest) => {
        this.cursor = cursorBefore(oldest.seq);
      },
    });
    this.sources = new SourcesPanel({ hrefFor: (source) => routeHref({ source }), onError: report });
    this.eventTypes = new EventTypesView({
      hrefFor: (source, eventType) => routeHref({ source, eventType }),
      onError: report,
    });
    this.sources.element.appendChild(this.eventTypes.element);
    this.filterBar = new FilterBar({
      onChange: (filters) => go(filters),
      onDeleted: (count) => {
        toast(`Deleted ${count.toLocaleString()} ${count === 1 ? 'delivery' : 'deliveries'}.`);
        void Promise.all([this.loadList(), this.sources.load()]).catch(report);
        this.eventTypes.reload();
      },
      onError: report,
    });
    this.searchNote = h(
      'p',
      { class: 'filter-hint', attrs: { hidden: '' } },
      'New deliveries are not added to a search as they arrive: search again to see them.',
    );
    this.detailPane = h('section', { class: 'detail-pane', attrs: { 'aria-label': 'Delivery' } });
    this.listTitle = h('h2', { class: 'pane-title' });
    this.liveBadge = h('span', { class: 'live', attrs: { 'data-state': 'connecting', role: 'status' } }, LIVE_LABELS.connecting);
    this.findInput = h('input', {
      attrs: {
        type: 'search',
        name: 'id',
        placeholder: 'Find by id or #seq',
        'aria-label': 'Find a delivery by id',
        autocomplete: 'off',
        spellcheck: 'false',
      },
    });
    const find = h(
      'form',
      { class: 'find', attrs: { role: 'search', 'aria-label': 'Delivery lookup' } },
      this.findInput,
      h('button', { class: 'button', attrs: { type: 'submit' } }, 'Find'),
    );
    find.addEventListener('submit', (event) => {
      event.preventDefault();
      // An id, or a seq as the list shows it (`#42`); the API takes either.
      const id = this.findInput.value.trim().replace(/^#(?=\d+$)/, '');
      if (id !== '') go({ ...this.filters, id });
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
        this.issues.toggle,
        this.refusals.toggle,
        this.destinations.toggle,
        button('Log out', () => void this.logOut(), 'button quiet', { 'data-action': 'logout' }),
      ),
      h(
        'main',
        { class: 'panes' },
        this.sources.element,
        h(
          'section',
          { class: 'list-pane', attrs: { 'aria-label': 'Deliveries' } },
          h('div', { class: 'pane-head' }, this.listTitle, this.filterBar.element, this.searchNote),
          this.traffic.element,
          this.list.element,
        ),
        this.detailPane,
      ),
      this.destinations.element,
      this.refusals.element,
      this.issues.element,
    );
    // The panels take the same place: opening one closes the others.
    const panels = [this.refusals, this.destinations, this.issues];
    for (const panel of panels) {
      panel.toggle.addEventListener('click', () => {
        for (const other of panels) if (other !== panel) other.close();
      });
    }
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
          if (this.openId !== undefined) go(this.filters);
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
      () => this.issues.stop(),
    );
    this.issues.start();

    // The stream starts right after the newest delivery there is now; anything
    // newer arrives through it, and the list below is de-duplicated by id.
    const newest = await listDeliveries({ limit: 1 });
    this.stream.start(newest.items[0]?.seq ?? 0);
    const route = readRoute();
    this.showFilters(filtersOf(route));
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
    const filters = filtersOf(route);
    if (!sameFilters(filters, this.filters)) {
      this.showFilters(filters);
      await this.loadList();
    }
    if (route.id !== this.openId) await this.open(route.id);
  }

  /** Puts the filters of the address in force: the bar, the sources, the event types. */
  private showFilters(filters: Filters): void {
    this.filters = filters;
    this.filterBar.show(filters);
    this.sources.setActive(filters.source);
    this.refusals.setSource(filters.source);
    this.traffic.setSource(filters.source);
    this.searchNote.hidden = filters.q === undefined;
    void this.eventTypes.show(filters.source, filters.eventType).catch(report);
  }

  private async loadList(): Promise<void> {
    const generation = ++this.generation;
    const { source } = this.filters;
    if (source === undefined) replaceChildren(this.listTitle, 'All deliveries');
    else replaceChildren(this.listTitle, 'From ', sourceName(source));
    this.list.setLoading();
    const page = await listDeliveries(this.filters);
    if (generation !== this.generation) return;
    this.cursor = page.nextCursor;
    this.list.reset(page.items, page.nextCursor, this.filters);
    this.list.select(this.openId);
  }

  private async loadOlder(): Promise<void> {
    if (this.cursor === null) return;
    const generation = this.generation;
    // The list trims no rows while this page is on its way (delivery-list.ts), so it joins without a gap.
    this.list.setLoading();
    let page: Awaited<ReturnType<typeof listDeliveries>>;
    try {
      page = await listDeliveries({ ...this.filters, cursor: this.cursor });
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
    if (matchesLive(delivery, this.filters)) this.list.prepend(delivery);
    // Counted in place: the sources and types are not fetched again for an arrival.
    this.sources.arrived(delivery);
    this.eventTypes.arrived(delivery);
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
    if (delivery.id !== id) this.openedBySeq(delivery.id);
    renderDetail(this.detailPane, delivery, {
      onDeleted: (deleted) => {
        const next = this.list.remove(deleted);
        go({ ...this.filters, id: next }, true);
        this.sources.removed(delivery.source);
        this.eventTypes.reload();
      },
      onBack: () => go(this.filters),
    });
    this.detailPane.scrollTop = 0;
  }

  /** Found by its seq: the address and the list name it by its id from now on. */
  private openedBySeq(id: string): void {
    this.openId = id;
    this.list.select(id);
    history.replaceState(null, '', routeHref({ ...this.filters, id }));
  }

  private async logOut(): Promise<void> {
    this.stop();
    await logOut();
    history.replaceState(null, '', location.pathname);
    this.onLoggedOut();
  }
}
