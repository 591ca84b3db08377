// A delivery's body: JSON as a collapsible tree, form data as a table, the
// other kinds as body-kinds-view.ts shows them, and the raw text. Every key
// and value is a text node.

import { filesList, isMultipartBody, textView, xmlView, type MultipartBody } from './body-kinds-view.ts';
import { h, type Child } from './dom.ts';

/** Levels of the tree that start open; deeper ones open on click. */
const OPEN_LEVELS = 2;
/** Children shown before a "show more" button, so that huge arrays stay fast. */
const CHUNK = 200;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isContainer(value: Json): value is Json[] | { [key: string]: Json } {
  return typeof value === 'object' && value !== null;
}

function entriesOf(value: Json[] | { [key: string]: Json }): Array<[string, Json]> {
  return Array.isArray(value)
    ? value.map((item, index): [string, Json] => [String(index), item])
    : Object.keys(value).map((key): [string, Json] => [key, value[key] as Json]);
}

function scalar(value: Json): HTMLElement {
  if (value === null) return h('span', { class: 'json-null' }, 'null');
  if (typeof value === 'string') return h('span', { class: 'json-string' }, JSON.stringify(value));
  if (typeof value === 'number') return h('span', { class: 'json-number' }, String(value));
  if (typeof value === 'boolean') return h('span', { class: 'json-boolean' }, String(value));
  return h('span', {}, String(value));
}

function keyLabel(key: string | undefined, isIndex: boolean): Child {
  if (key === undefined) return null;
  return h('span', { class: isIndex ? 'json-index' : 'json-key' }, isIndex ? key : JSON.stringify(key), ': ');
}

function summaryOf(value: Json[] | { [key: string]: Json }): string {
  const count = Array.isArray(value) ? value.length : Object.keys(value).length;
  if (Array.isArray(value)) return `[ ${count} ${count === 1 ? 'item' : 'items'} ]`;
  return `{ ${count} ${count === 1 ? 'key' : 'keys'} }`;
}

/** Appends the children of a container, a chunk at a time. */
function fillChildren(list: HTMLElement, value: Json[] | { [key: string]: Json }, depth: number, from = 0): void {
  const entries = entriesOf(value);
  const isArray = Array.isArray(value);
  for (const [key, child] of entries.slice(from, from + CHUNK)) {
    list.appendChild(h('li', {}, node(child, key, isArray, depth + 1)));
  }
  const rest = entries.length - from - CHUNK;
  if (rest > 0) {
    const more = h(
      'li',
      {},
      h(
        'button',
        {
          class: 'link',
          attrs: { type: 'button' },
          on: {
            click: () => {
              more.remove();
              fillChildren(list, value, depth, from + CHUNK);
            },
          },
        },
        `show ${Math.min(rest, CHUNK)} more of ${rest}`,
      ),
    );
    list.appendChild(more);
  }
}

function node(value: Json, key: string | undefined, isIndex: boolean, depth: number): HTMLElement {
  if (!isContainer(value)) return h('div', { class: 'json-leaf' }, keyLabel(key, isIndex), scalar(value));
  const empty = Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0;
  if (empty)
    return h(
      'div',
      { class: 'json-leaf' },
      keyLabel(key, isIndex),
      h('span', { class: 'json-punct' }, Array.isArray(value) ? '[]' : '{}'),
    );
  const list = h('ul', { class: 'json-children' });
  const details = h(
    'details',
    { class: 'json-node' },
    h('summary', {}, keyLabel(key, isIndex), h('span', { class: 'json-punct' }, summaryOf(value))),
    list,
  );
  // Children are built on first opening, so a large body costs nothing until looked at.
  let filled = false;
  const fill = (): void => {
    if (filled) return;
    filled = true;
    fillChildren(list, value, depth);
  };
  details.addEventListener('toggle', () => {
    if (details.open) fill();
  });
  if (depth < OPEN_LEVELS) {
    details.open = true;
    fill();
  }
  return details;
}

/** The parsed JSON body as a tree of `<details>`. */
export function jsonTree(body: unknown): HTMLElement {
  return h('div', { class: 'json-tree', attrs: { role: 'tree' } }, node(body as Json, undefined, false, 0));
}

/** Form data (`key` to string or list of strings) as a two-column table, one row per value. */
export function formTable(body: Record<string, unknown>): HTMLElement {
  const rows: HTMLElement[] = [];
  for (const key of Object.keys(body)) {
    const value = body[key];
    const values = Array.isArray(value) ? value : [value];
    for (const item of values) {
      rows.push(h('tr', {}, h('th', { attrs: { scope: 'row' } }, key), h('td', {}, String(item))));
    }
  }
  return h(
    'table',
    { class: 'kv-table form-table' },
    h('thead', {}, h('tr', {}, h('th', { attrs: { scope: 'col' } }, 'Field'), h('th', { attrs: { scope: 'col' } }, 'Value'))),
    h('tbody', {}, ...rows),
  );
}

/** How the page shows a body first, by its Content-Type (CONTRACT 9). */
export type BodyView = 'form' | 'multipart' | 'text' | 'xml' | 'tree';

export function bodyViewOf(contentType: string, body: unknown): BodyView {
  const essence = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (essence === 'application/x-www-form-urlencoded' && typeof body === 'object' && body !== null && !Array.isArray(body)) {
    return 'form';
  }
  if (essence === 'multipart/form-data' && isMultipartBody(body)) return 'multipart';
  if (
    typeof body === 'string' &&
    (essence === 'application/xml' || essence === 'text/xml' || /^application\/[^/]+\+xml$/.test(essence))
  ) {
    return 'xml';
  }
  if (typeof body === 'string' && essence === 'text/plain') return 'text';
  return 'tree';
}

/** The tab that shows the parsed body is named after what it shows. */
export const VIEW_LABEL: Readonly<Record<BodyView, string>> = {
  form: 'Form',
  multipart: 'Form',
  text: 'Text',
  xml: 'XML',
  tree: 'Tree',
};

/** The parsed body as the page shows it first: a form table, fields and files, text, indented XML, or a JSON tree. */
export function parsedBody(delivery: { id: string; contentType: string; body: unknown }): HTMLElement {
  const { body } = delivery;
  if (body === null || body === undefined) {
    return h(
      'p',
      { class: 'muted' },
      'This body is not parsed (of a type the source keeps as it came, or one that did not parse); the raw bytes are under "Raw".',
    );
  }
  switch (bodyViewOf(delivery.contentType, body)) {
    case 'form':
      return formTable(body as Record<string, unknown>);
    case 'multipart': {
      const { fields, files } = body as MultipartBody;
      return h(
        'div',
        { class: 'multipart-body' },
        h('h4', {}, `Files (${files.length})`),
        filesList(delivery.id, files),
        h('h4', {}, 'Fields'),
        Object.keys(fields).length === 0 ? h('p', { class: 'muted' }, 'No fields.') : formTable(fields),
      );
    }
    case 'text':
      return textView(body as string);
    case 'xml':
      return xmlView(body as string);
    default:
      return jsonTree(body);
  }
}

/** Raw text shown at most this long; the whole body is one download away. */
const RAW_SHOWN = 512 * 1024;

/** The raw bytes as text (invalid UTF-8 shown with replacement characters). */
export function rawText(raw: Uint8Array): HTMLElement {
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(raw.subarray(0, RAW_SHOWN));
  return h(
    'div',
    {},
    h('pre', { class: 'raw-body' }, text),
    raw.length > RAW_SHOWN
      ? h('p', { class: 'muted' }, `Showing the first ${RAW_SHOWN / 1024} KiB; download the raw body for all of it.`)
      : null,
  );
}
