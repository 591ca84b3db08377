// The refused requests (CONTRACT 9): why a webhook never reached the inbox.
// A panel opened from the top bar, for the source the inbox shows (or every
// source), newest first: when, the status and code, the detail the sender
// was answered, and under it the request's headers and the start of its
// body. New refusals come in every 2 s while it is open and the tab is
// visible; older ones a page at a time. Every value is the sender's, shown
// as text only.

import { Unauthorized } from './api.ts';
import { headersTable } from './detail-view.ts';
import { button, h, replaceChildren, type Child } from './dom.ts';
import { formatSize, relativeTime, shortContentType, timeTitle } from './format.ts';
import { SidePanel } from './side-panel.ts';
import { listRefusals, type Refusal } from './refusals-api.ts';
import { sourceName } from './source-name.ts';
import { toast } from './toast.ts';

const REFRESH_MS = 2000;
const PAGE = 50;
/** What the server keeps of a body (REFUSAL_PREVIEW_BYTES). */
const PREVIEW_BYTES = 4096;

export class RefusalsView {
  /** The top bar's button that opens and closes the panel. */
  readonly toggle: HTMLButtonElement;
  readonly element: HTMLElement;
  private readonly title: HTMLElement;
  private readonly scope: HTMLElement;
  private readonly list: HTMLElement;
  private readonly more: HTMLElement;
  private readonly problem: HTMLElement;
  private readonly panel: SidePanel;
  /** The inbox's source, and whether the panel shows only its refusals. */
  private inboxSource: string | undefined;
  private onlyThatSource = true;
  /** Whether the first page is shown; the newest refusal shown (its seq); where the next older page starts. */
  private loaded = false;
  private newest = 0;
  private cursor: string | null = null;
  private generation = 0;

  constructor() {
    this.toggle = button('Refused', () => (this.isOpen ? this.close() : this.open()), 'button quiet', {
      'data-action': 'refusals',
      'aria-expanded': 'false',
      'aria-controls': 'refusals-panel',
      title: 'Requests to /api/webhook/… that were refused, and why',
    });
    this.title = h('h2', {});
    this.scope = h('div', { class: 'refusals-scope' });
    this.list = h('div', { class: 'refusal-list', attrs: { role: 'list' } });
    this.more = h('div', { class: 'refusals-more' });
    this.problem = h('p', { class: 'error', attrs: { hidden: '' } });
    this.element = h(
      'aside',
      {
        class: 'destinations-panel refusals-panel',
        attrs: { id: 'refusals-panel', 'aria-label': 'Refused requests', hidden: '' },
      },
      h(
        'div',
        { class: 'section-head' },
        this.title,
        button('Close', () => this.close(), 'button quiet', { 'data-action': 'close-refusals' }),
      ),
      h(
        'p',
        { class: 'muted' },
        'Requests that the webhook route refused: what each sender was answered, with its headers and the start of its body. Nothing here reached the inbox.',
      ),
      this.scope,
      this.problem,
      this.list,
      this.more,
    );
    this.panel = new SidePanel(this.element, this.toggle, () => this.refresh(), REFRESH_MS);
  }

  get isOpen(): boolean {
    return this.panel.isOpen;
  }

  /** The source the inbox shows now (undefined: every source); the panel follows it. */
  setSource(source: string | undefined): void {
    if (source === this.inboxSource) return;
    this.inboxSource = source;
    this.onlyThatSource = true;
    if (this.isOpen) this.restart();
  }

  open(): void {
    this.startOver();
    this.panel.open();
  }

  close(): void {
    this.panel.close();
  }

  /** The source whose refusals are shown; undefined for all of them. */
  private get shown(): string | undefined {
    return this.onlyThatSource ? this.inboxSource : undefined;
  }

  /** Starts over: the first page of what is shown now, then new ones as they come. */
  private restart(): void {
    this.startOver();
    this.panel.restart();
  }

  /** Forgets what is shown: the next refresh reads the first page of what is shown now. */
  private startOver(): void {
    this.generation++;
    this.loaded = false;
    this.newest = 0;
    this.cursor = null;
    replaceChildren(this.list, h('p', { class: 'muted' }, 'Loading…'));
    replaceChildren(this.more);
    this.drawScope();
  }

  private drawScope(): void {
    const source = this.shown;
    if (source === undefined) replaceChildren(this.title, 'Refused requests');
    else replaceChildren(this.title, 'Refused requests to ', sourceName(source));
    if (this.inboxSource === undefined) {
      replaceChildren(this.scope);
      return;
    }
    const other = this.onlyThatSource
      ? button('Show every source', () => this.setScope(false), 'button link', { 'data-action': 'refusals-all' })
      : button('Show only ', () => this.setScope(true), 'button link', { 'data-action': 'refusals-source' });
    if (!this.onlyThatSource) other.append(sourceName(this.inboxSource));
    replaceChildren(this.scope, other);
  }

  private setScope(onlyThatSource: boolean): void {
    this.onlyThatSource = onlyThatSource;
    this.restart();
  }

  /** The first page: the whole list the first time, then only the refusals newer than those shown. */
  private async refresh(): Promise<void> {
    const generation = this.generation;
    const source = this.shown;
    let page: Awaited<ReturnType<typeof listRefusals>>;
    try {
      page = await listRefusals({ ...(source === undefined ? {} : { source }), limit: PAGE });
    } catch (error) {
      if (error instanceof Unauthorized) throw error;
      this.problem.textContent = `Could not read the refused requests: ${(error as Error).message}`;
      this.problem.hidden = false;
      return;
    }
    if (generation !== this.generation) return;
    this.problem.hidden = true;
    const fresh = page.items.filter((r) => r.seq > this.newest);
    if (!this.loaded) {
      this.loaded = true;
      this.cursor = page.nextCursor;
      replaceChildren(this.list, ...(fresh.length === 0 ? [this.empty()] : fresh.map(refusalItem)));
      this.drawMore();
    } else if (fresh.length > 0) {
      this.list.querySelector('.refusals-empty')?.remove();
      this.list.prepend(...fresh.map(refusalItem));
    }
    this.newest = Math.max(this.newest, page.items[0]?.seq ?? 0);
    for (const time of this.list.querySelectorAll<HTMLElement>('[data-relative]')) {
      time.textContent = relativeTime(time.dataset.relative ?? '');
    }
  }

  private empty(): HTMLElement {
    const source = this.shown;
    return h(
      'p',
      { class: 'muted refusals-empty' },
      source === undefined ? 'No request was refused.' : 'No request to this source was refused.',
      ' Refusals are kept for 7 days by default (RECEPTION_REFUSALS_RETENTION).',
    );
  }

  private drawMore(): void {
    replaceChildren(
      this.more,
      this.cursor === null
        ? null
        : button('Load older', () => void this.loadOlder(), 'button', { 'data-action': 'refusals-older' }),
    );
  }

  private async loadOlder(): Promise<void> {
    if (this.cursor === null) return;
    const generation = this.generation;
    const source = this.shown;
    try {
      const page = await listRefusals({ ...(source === undefined ? {} : { source }), cursor: this.cursor, limit: PAGE });
      if (generation !== this.generation) return;
      this.cursor = page.nextCursor;
      this.list.append(...page.items.map(refusalItem));
      this.drawMore();
    } catch (error) {
      if (!(error instanceof Unauthorized)) toast(`Could not read older refusals: ${(error as Error).message}`, 'error');
    }
  }
}

/** A size as the panel writes every size: "5.7 MiB", the exact count of bytes in its title. */
function size(bytes: number): HTMLElement {
  return h(
    'span',
    {
      class: 'size',
      attrs: { 'data-bytes': String(bytes), title: `${bytes.toLocaleString()} ${bytes === 1 ? 'byte' : 'bytes'}` },
    },
    formatSize(bytes),
  );
}

/**
 * The detail the sender was answered, with each "N bytes" in it ("The body
 * is larger than 5242880 bytes.") written as the panel writes sizes; the
 * sender's exact number is in the title.
 */
function detailText(detail: string): Child[] {
  return detail.split(/\b(\d+) bytes\b/).map((piece, i) => (i % 2 === 1 ? size(Number(piece)) : piece));
}

/** One refusal: a summary line, the detail the sender got, and the request under a disclosure. */
function refusalItem(r: Refusal): HTMLElement {
  const preview =
    r.bodyPreview === ''
      ? h(
          'p',
          { class: 'muted' },
          r.code === 'payload_too_large' ? 'The body is not kept: it was refused for its size.' : 'No body.',
        )
      : h('pre', { class: 'raw-body refusal-preview' }, r.bodyPreview);
  const cut: Child[] =
    r.size > PREVIEW_BYTES && r.bodyPreview !== '' ? [' (the first ', size(PREVIEW_BYTES), ' of ', size(r.size), ')'] : [];
  return h(
    'div',
    {
      class: 'refusal',
      attrs: { role: 'listitem', 'data-seq': String(r.seq), 'data-code': r.code, 'data-status': String(r.status) },
    },
    h(
      'div',
      { class: 'refusal-head' },
      h('span', { class: 'badge badge-failed refusal-status' }, String(r.status)),
      h('code', { class: 'refusal-code' }, r.code),
      h(
        'span',
        { class: 'refusal-source' },
        r.source === null
          ? h(
              'span',
              { class: 'muted', attrs: { title: 'The name in the path is not a valid source name' } },
              'invalid source name',
            )
          : sourceName(r.source),
      ),
      h('span', { class: 'muted' }, `${r.method} · ${shortContentType(r.contentType)} · `, size(r.size)),
      h(
        'time',
        { class: 'muted', attrs: { datetime: r.receivedAt, title: timeTitle(r.receivedAt), 'data-relative': r.receivedAt } },
        relativeTime(r.receivedAt),
      ),
    ),
    h('p', { class: 'refusal-detail' }, ...detailText(r.detail)),
    h(
      'details',
      { class: 'refusal-request' },
      h('summary', {}, 'The request'),
      h('h3', {}, `Headers (${r.headers.length})`),
      headersTable(r.headers),
      h('h3', {}, 'Body', ...cut),
      preview,
    ),
  );
}
