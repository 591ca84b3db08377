// One delivery in full: what arrived (its source and event type, when), what
// can be done with it (copy as curl, download, delete), then its body first,
// then the facts, its forwards, the routes' transforms to try, query string
// and headers.

import { deleteDelivery, getRawBody, rawBodyUrl, type Delivery, type Verification } from './api.ts';
import { failureSentence } from '../../src/verify/failure-text.js';
import { bodyViewOf, needsRaw, parsedBody, rawText, VIEW_LABEL } from './body-view.ts';
import { copyText } from './clipboard.ts';
import { resendCommand } from './curl-command.ts';
import { button, h, replaceChildren } from './dom.ts';
import { formatSize, formatTime, relativeTime, timeTitle } from './format.ts';
import { forwardsSection } from './forwards-view.ts';
import { sourceName } from './source-name.ts';
import { toast } from './toast.ts';
import { transformTrySection } from './transform-try.ts';

export interface DetailHandlers {
  /** The delivery was deleted here. */
  onDeleted(id: string): void;
  /** Back to the list (phone width). */
  onBack(): void;
}

/**
 * The verification outcome as a badge: green when verified, red when the
 * check failed, grey "unsigned" for a source that checks no signature (not
 * a warning: most sources are so).
 */
export function verificationBadge(verification: Verification): HTMLElement {
  const scheme = verification.scheme === undefined ? '' : ` · ${verification.scheme}`;
  const label = verification.status === 'none' ? 'unsigned' : `${verification.status}${scheme}`;
  const title =
    verification.status === 'none'
      ? 'No signature is checked for this source (set verify in the config file to check one).'
      : verification.status === 'failed'
        ? failureSentence(verification.scheme, verification.reason)
        : `Signature verification: ${label}`;
  return h('span', { class: `badge badge-${verification.status}`, attrs: { title } }, label);
}

/** What the verification row says beside its badge: for a failure, the sentence the sender was answered with. */
function verificationNote(verification: Verification): HTMLElement | string {
  if (verification.status !== 'failed') return '';
  return h('span', { class: 'verification-failure' }, failureSentence(verification.scheme, verification.reason));
}

/** The query string as a table, one row per parameter in the order sent (a repeated name once a row). */
export function queryTable(query: string): HTMLElement {
  if (query === '') return h('p', { class: 'muted' }, 'No query string.');
  const rows = [...new URLSearchParams(query)].map(([name, value]) =>
    h('tr', {}, h('th', { attrs: { scope: 'row' } }, name), h('td', {}, value)),
  );
  return h(
    'div',
    {},
    h(
      'table',
      { class: 'kv-table query-table' },
      h('thead', {}, h('tr', {}, h('th', { attrs: { scope: 'col' } }, 'Name'), h('th', { attrs: { scope: 'col' } }, 'Value'))),
      h('tbody', {}, ...rows),
    ),
    h('p', { class: 'muted query-raw' }, h('code', {}, `?${query}`)),
  );
}

function metaRow(term: string, ...value: Array<Node | string>): HTMLElement[] {
  return [h('dt', {}, term), h('dd', {}, ...value)];
}

export function headersTable(headers: Delivery['headers']): HTMLElement {
  if (headers.length === 0) return h('p', { class: 'muted' }, 'No headers.');
  return h(
    'table',
    { class: 'kv-table headers-table' },
    h('thead', {}, h('tr', {}, h('th', { attrs: { scope: 'col' } }, 'Name'), h('th', { attrs: { scope: 'col' } }, 'Value'))),
    h(
      'tbody',
      {},
      ...headers.map(([name, value]) => h('tr', {}, h('th', { attrs: { scope: 'row' } }, name), h('td', {}, value))),
    ),
  );
}

/** Renders `delivery` into `container`, replacing what was there. */
export function renderDetail(container: HTMLElement, delivery: Delivery, handlers: DetailHandlers): void {
  let raw: Promise<Uint8Array> | undefined;
  const loadRaw = (): Promise<Uint8Array> => {
    raw ??= getRawBody(delivery.id);
    return raw;
  };

  const curlBox = h('div', { class: 'curl-box', attrs: { hidden: '' } });
  const confirmBox = h('div', {
    class: 'confirm-box',
    attrs: { hidden: '', role: 'alertdialog', 'aria-label': 'Confirm delete' },
  });

  const copyCurl = async (): Promise<void> => {
    try {
      const command = resendCommand(location.origin, delivery, await loadRaw());
      replaceChildren(curlBox, h('pre', { class: 'code curl-command' }, command));
      curlBox.hidden = false;
      toast((await copyText(command)) ? 'Copied the curl command.' : 'Select the command below and copy it.');
    } catch (error) {
      toast(`Could not build the command: ${(error as Error).message}`, 'error');
    }
  };

  const askDelete = (): void => {
    replaceChildren(
      confirmBox,
      h('p', {}, 'Delete this delivery? This cannot be undone.'),
      button('Delete', () => void confirmDelete(), 'button danger', { 'data-action': 'confirm-delete' }),
      button(
        'Cancel',
        () => {
          confirmBox.hidden = true;
        },
        'button',
        { 'data-action': 'cancel-delete' },
      ),
    );
    confirmBox.hidden = false;
    confirmBox.querySelector<HTMLButtonElement>('[data-action="cancel-delete"]')?.focus();
  };

  const confirmDelete = async (): Promise<void> => {
    try {
      await deleteDelivery(delivery.id);
      toast('Deleted.');
      handlers.onDeleted(delivery.id);
    } catch (error) {
      toast(`Could not delete: ${(error as Error).message}`, 'error');
    }
  };

  const bodyArea = h('div', { class: 'body-area' });
  const parsedTab = h(
    'button',
    { class: 'tab', attrs: { type: 'button', role: 'tab', 'aria-selected': 'true' } },
    VIEW_LABEL[bodyViewOf(delivery.contentType, delivery.body)],
  );
  const rawTab = h('button', { class: 'tab', attrs: { type: 'button', role: 'tab', 'aria-selected': 'false' } }, 'Raw');
  const showParsed = async (): Promise<void> => {
    parsedTab.setAttribute('aria-selected', 'true');
    rawTab.setAttribute('aria-selected', 'false');
    if (!needsRaw(delivery)) {
      replaceChildren(bodyArea, parsedBody(delivery));
      return;
    }
    // The tree is drawn from the bytes as sent, not from the parsed body (json-source-tree.ts).
    replaceChildren(bodyArea, h('p', { class: 'muted' }, 'Loading…'));
    let bytes: Uint8Array | undefined;
    try {
      bytes = await loadRaw();
    } catch {
      bytes = undefined; // the tree of the parsed body, then
    }
    if (parsedTab.getAttribute('aria-selected') === 'true') replaceChildren(bodyArea, parsedBody(delivery, bytes));
  };
  const showRaw = async (): Promise<void> => {
    parsedTab.setAttribute('aria-selected', 'false');
    rawTab.setAttribute('aria-selected', 'true');
    replaceChildren(bodyArea, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const bytes = await loadRaw();
      if (rawTab.getAttribute('aria-selected') === 'true') replaceChildren(bodyArea, rawText(bytes));
    } catch (error) {
      replaceChildren(bodyArea, h('p', { class: 'error' }, `Could not load the raw body: ${(error as Error).message}`));
    }
  };
  parsedTab.addEventListener('click', () => void showParsed());
  rawTab.addEventListener('click', () => void showRaw());
  void showParsed();

  const verification = delivery.verification;
  const received = h(
    'time',
    { attrs: { datetime: delivery.receivedAt, title: timeTitle(delivery.receivedAt), 'data-relative': delivery.receivedAt } },
    relativeTime(delivery.receivedAt),
  );

  replaceChildren(
    container,
    h(
      'article',
      { class: 'detail', attrs: { 'aria-label': 'Delivery detail', 'data-id': delivery.id } },
      h(
        'header',
        { class: 'detail-head' },
        button('← List', handlers.onBack, 'button back-button'),
        h('h2', { class: 'detail-source' }, sourceName(delivery.source)),
        delivery.eventType === null
          ? null
          : h('span', { class: 'detail-event-type', attrs: { title: 'Event type' } }, delivery.eventType),
        verificationBadge(verification),
      ),
      h('p', { class: 'detail-time' }, formatTime(delivery.receivedAt), ' · ', received),
      h(
        'div',
        { class: 'actions' },
        button('Copy as curl', () => void copyCurl(), 'button', { 'data-action': 'copy-curl' }),
        h(
          'a',
          {
            class: 'button',
            attrs: { href: rawBodyUrl(delivery.id), download: `${delivery.id}.body`, 'data-action': 'download' },
          },
          'Download raw',
        ),
        button('Delete…', askDelete, 'button danger-outline', { 'data-action': 'delete' }),
      ),
      confirmBox,
      curlBox,
      h(
        'section',
        { class: 'detail-section', attrs: { 'aria-label': 'Body' } },
        h(
          'div',
          { class: 'section-head' },
          h('h3', {}, 'Body'),
          h('div', { class: 'tabs', attrs: { role: 'tablist' } }, parsedTab, rawTab),
        ),
        bodyArea,
      ),
      h(
        'dl',
        { class: 'meta' },
        ...metaRow('Source', sourceName(delivery.source)),
        ...metaRow('Event type', delivery.eventType ?? h('span', { class: 'muted' }, 'none')),
        ...metaRow('Received', formatTime(delivery.receivedAt)),
        ...metaRow('Size', `${formatSize(delivery.size)} (${delivery.size.toLocaleString()} bytes)`),
        ...metaRow('Content type', delivery.contentType || '(none)'),
        ...metaRow('Remote address', delivery.remoteAddress),
        ...metaRow('Method', delivery.method),
        ...metaRow('Verification', verificationBadge(verification), ' ', verificationNote(verification)),
        ...metaRow('ID', h('code', { class: 'delivery-id' }, delivery.id)),
        ...metaRow(
          'Seq',
          h('code', { class: 'delivery-seq', attrs: { title: 'Find, the API and replay take it too' } }, `#${delivery.seq}`),
        ),
      ),
      forwardsSection(delivery),
      transformTrySection(delivery),
      delivery.query === ''
        ? null
        : h(
            'section',
            { class: 'detail-section', attrs: { 'aria-label': 'Query string' } },
            h('div', { class: 'section-head' }, h('h3', {}, 'Query string')),
            queryTable(delivery.query),
          ),
      h(
        'section',
        { class: 'detail-section', attrs: { 'aria-label': 'Headers' } },
        h('div', { class: 'section-head' }, h('h3', {}, `Headers (${delivery.headers.length})`)),
        headersTable(delivery.headers),
      ),
    ),
  );
}

/** What the detail pane shows when nothing is open. */
export function renderNoDetail(container: HTMLElement, message = 'Choose a delivery to see it in full.'): void {
  replaceChildren(container, h('div', { class: 'detail-placeholder' }, h('p', { class: 'muted' }, message)));
}
