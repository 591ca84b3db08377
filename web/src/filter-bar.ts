// The list's search box, its filters as chips that each remove one, and the
// delete of everything a filter matches, after a confirmation that says how
// many. The filters live in the address (route.ts), so a search is a link.

import { countDeliveries, deleteMatching } from './api.ts';
import { button, h, replaceChildren } from './dom.ts';
import { formatTime } from './format.ts';
import { FILTER_NAMES, type FilterName, type Filters } from './route.ts';
import { sourceName } from './source-name.ts';

export interface FilterBarOptions {
  /** The reader asked for other filters: the page moves to them. */
  onChange(filters: Filters): void;
  /** Deliveries were deleted by filter: the list and the counts are read again. */
  onDeleted(count: number): void;
  onError(error: unknown): void;
}

const LABELS: Record<FilterName, string> = {
  source: 'Source',
  eventType: 'Event type',
  verification: 'Verification',
  since: 'Since',
  until: 'Until',
  q: 'Text',
};

/** The fewest characters a search takes (the server's index works in trigrams). */
const MIN_SEARCH = 3;

export class FilterBar {
  readonly element: HTMLElement;
  private readonly searchInput: HTMLInputElement;
  private readonly typeInput: HTMLInputElement;
  private readonly verificationSelect: HTMLSelectElement;
  private readonly sinceInput: HTMLInputElement;
  private readonly untilInput: HTMLInputElement;
  private readonly hint: HTMLElement;
  private readonly chips: HTMLUListElement;
  private readonly bulk: HTMLElement;
  private filters: Filters = {};
  /** Bumped by every change of filters: a confirmation asked under older filters is dropped. */
  private generation = 0;

  constructor(private readonly options: FilterBarOptions) {
    this.searchInput = h('input', {
      attrs: {
        type: 'search',
        name: 'q',
        placeholder: 'Search bodies and header values',
        'aria-label': 'Search deliveries',
        autocomplete: 'off',
        spellcheck: 'false',
        maxlength: '256',
      },
    });
    this.hint = h('p', { class: 'filter-hint', attrs: { role: 'status' } });
    const search = h(
      'form',
      { class: 'delivery-search', attrs: { role: 'search', 'aria-label': 'Delivery search' } },
      this.searchInput,
      h('button', { class: 'button', attrs: { type: 'submit' } }, 'Search'),
    );
    search.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submitSearch();
    });
    this.typeInput = h('input', {
      attrs: {
        type: 'text',
        name: 'eventType',
        placeholder: 'invoice.paid or invoice.*',
        autocomplete: 'off',
        spellcheck: 'false',
      },
    });
    this.verificationSelect = h(
      'select',
      { attrs: { name: 'verification' } },
      h('option', { attrs: { value: '' } }, 'any'),
      h('option', { attrs: { value: 'verified' } }, 'verified'),
      h('option', { attrs: { value: 'failed' } }, 'failed'),
      h('option', { attrs: { value: 'none' } }, 'none'),
    );
    this.sinceInput = h('input', { attrs: { type: 'datetime-local', name: 'since', step: '1' } });
    this.untilInput = h('input', { attrs: { type: 'datetime-local', name: 'until', step: '1' } });
    const form = h(
      'form',
      { class: 'filter-form' },
      field('Event type', this.typeInput),
      field('Verification', this.verificationSelect),
      field('Received since', this.sinceInput),
      field('Received before', this.untilInput),
      h('button', { class: 'button', attrs: { type: 'submit' } }, 'Apply'),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submitFilters();
    });
    this.chips = h('ul', { class: 'filter-chips', attrs: { 'aria-label': 'Filters in force' } });
    this.bulk = h('div', { class: 'bulk-delete' });
    this.element = h(
      'div',
      { class: 'filter-bar' },
      search,
      this.hint,
      h('details', { class: 'more-filters' }, h('summary', {}, 'Filters'), form),
      this.chips,
      this.bulk,
    );
  }

  /** Shows the filters in force (from the address). */
  show(filters: Filters): void {
    this.filters = { ...filters };
    this.generation++;
    this.searchInput.value = filters.q ?? '';
    this.typeInput.value = filters.eventType ?? '';
    this.verificationSelect.value = filters.verification ?? '';
    this.sinceInput.value = localInputValue(filters.since);
    this.untilInput.value = localInputValue(filters.until);
    replaceChildren(this.hint);
    replaceChildren(
      this.chips,
      ...FILTER_NAMES.filter((name) => filters[name] !== undefined).map((name) => this.chip(name, filters[name] ?? '')),
    );
    this.renderBulk();
  }

  private chip(name: FilterName, value: string): HTMLLIElement {
    const shown = name === 'since' || name === 'until' ? formatTime(value) : name === 'source' ? sourceName(value) : value;
    return h(
      'li',
      { class: 'filter-chip', attrs: { 'data-filter': name } },
      h('span', { class: 'chip-label' }, `${LABELS[name]}: `),
      h('span', { class: 'chip-value' }, shown),
      button('×', () => this.options.onChange({ ...this.filters, [name]: undefined }), 'chip-remove', {
        'aria-label': `Remove the filter ${LABELS[name].toLowerCase()}`,
        title: 'Remove this filter',
      }),
    );
  }

  private submitSearch(): void {
    const text = this.searchInput.value.trim();
    if (text !== '' && [...text].length < MIN_SEARCH) {
      replaceChildren(this.hint, `Type at least ${MIN_SEARCH} characters to search.`);
      return;
    }
    this.options.onChange({ ...this.filters, q: text === '' ? undefined : text });
  }

  private submitFilters(): void {
    const type = this.typeInput.value.trim();
    const verification = this.verificationSelect.value;
    this.options.onChange({
      ...this.filters,
      eventType: type === '' ? undefined : type,
      verification:
        verification === 'verified' || verification === 'failed' || verification === 'none' ? verification : undefined,
      since: isoOf(this.sinceInput.value),
      until: isoOf(this.untilInput.value),
    });
  }

  /** "Delete matching…" while a filter is in force; nothing otherwise (a delete needs a filter). */
  private renderBulk(): void {
    const active = FILTER_NAMES.some((name) => this.filters[name] !== undefined);
    replaceChildren(
      this.bulk,
      active
        ? button(
            'Delete matching…',
            () => void this.confirmDelete().catch((error: unknown) => this.options.onError(error)),
            'button danger-outline',
            {
              'data-action': 'delete-matching',
            },
          )
        : null,
    );
  }

  /**
   * Counts what the filters match, then asks. What is deleted is what was
   * counted: deliveries received after the count are left alone (`until`).
   */
  private async confirmDelete(): Promise<void> {
    const generation = this.generation;
    const countedAt = new Date().toISOString();
    const filters: Filters = { ...this.filters, until: earlier(this.filters.until, countedAt) };
    replaceChildren(this.bulk, h('p', { class: 'muted' }, 'Counting…'));
    const { count, atLeast } = await countDeliveries(filters);
    if (generation !== this.generation) return;
    if (count === 0) {
      replaceChildren(this.bulk, h('p', { class: 'muted' }, 'Nothing matches these filters.'));
      setTimeout(() => {
        if (generation === this.generation) this.renderBulk();
      }, 3000);
      return;
    }
    const amount = `${atLeast ? 'at least ' : ''}${count.toLocaleString()} ${count === 1 ? 'delivery' : 'deliveries'}`;
    replaceChildren(
      this.bulk,
      h(
        'div',
        { class: 'confirm', attrs: { role: 'alertdialog', 'aria-label': 'Delete matching deliveries' } },
        h('p', { class: 'confirm-text' }, `Delete ${amount} that match these filters? This cannot be undone.`),
        button(
          `Delete ${amount}`,
          () => void this.deleteNow(filters, generation).catch((error: unknown) => this.options.onError(error)),
          'button danger',
          { 'data-action': 'confirm-delete-matching' },
        ),
        button('Cancel', () => this.renderBulk(), 'button quiet', { 'data-action': 'cancel-delete-matching' }),
      ),
    );
  }

  private async deleteNow(filters: Filters, generation: number): Promise<void> {
    if (generation !== this.generation) return;
    replaceChildren(this.bulk, h('p', { class: 'muted' }, 'Deleting…'));
    const deleted = await deleteMatching(filters);
    this.renderBulk();
    this.options.onDeleted(deleted);
  }
}

function field(label: string, control: HTMLElement): HTMLLabelElement {
  return h('label', { class: 'filter-field' }, h('span', {}, label), control);
}

/** The earlier of two RFC 3339 times (either may be absent). */
function earlier(a: string | undefined, b: string): string {
  return a === undefined || Date.parse(b) < Date.parse(a) ? b : a;
}

/** A `datetime-local` value (the viewer's time zone) as RFC 3339 UTC; undefined when empty or not a time. */
function isoOf(local: string): string | undefined {
  if (local === '') return undefined;
  const time = new Date(local);
  return Number.isNaN(time.getTime()) ? undefined : time.toISOString();
}

/** An RFC 3339 time as a `datetime-local` value in the viewer's time zone. */
function localInputValue(iso: string | undefined): string {
  if (iso === undefined) return '';
  const time = new Date(iso);
  if (Number.isNaN(time.getTime())) return '';
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${time.getFullYear()}-${pad(time.getMonth() + 1)}-${pad(time.getDate())}T${pad(time.getHours())}:${pad(time.getMinutes())}:${pad(time.getSeconds())}`;
}
