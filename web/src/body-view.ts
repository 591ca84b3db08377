// A delivery's body: JSON as a collapsible tree of the sender's text
// (json-source-tree.ts), form data as a table, the other kinds as
// body-kinds-view.ts shows them, and the raw text; a large one in part
// first (body-part.ts). Every key and value is a text node.

import { filesList, isMultipartBody, textView, xmlView, type MultipartBody } from './body-kinds-view.ts';
import { SHOWN_FIRST, shownInPart, textOf } from './body-part.ts';
import { h } from './dom.ts';
import { jsonSourceTree } from './json-source-tree.ts';

/**
 * Form data (`key` to string or list of strings) as a two-column table, one
 * row per value; at most `maxChars` characters of names and values (the
 * value that reaches it cut there), for a body shown in part.
 */
export function formTable(body: Record<string, unknown>, maxChars = Infinity): HTMLElement {
  const rows: HTMLElement[] = [];
  let left = maxChars;
  for (const key of Object.keys(body)) {
    const value = body[key];
    const values = Array.isArray(value) ? value : [value];
    for (const item of values) {
      if (left <= 0) break;
      const text = String(item);
      left -= key.length;
      const shown = text.length > left ? text.slice(0, Math.max(0, left)) : text;
      left -= text.length;
      rows.push(h('tr', {}, h('th', { attrs: { scope: 'row' } }, key), h('td', {}, shown)));
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

/** Whether the first view of this body is the tree, drawn from the raw bytes (so the detail fetches them first). */
export function needsRaw(delivery: { contentType: string; body: unknown }): boolean {
  return delivery.body !== null && delivery.body !== undefined && bodyViewOf(delivery.contentType, delivery.body) === 'tree';
}

/**
 * The tree of the body as sent, from its raw bytes; from the parsed body
 * when the bytes are not at hand or are not JSON (then a key sent twice is
 * there once: JSON.parse kept the last).
 */
function treeView(body: unknown, raw: Uint8Array | undefined): HTMLElement {
  const fromParsed = (): HTMLElement =>
    jsonSourceTree(JSON.stringify(body) ?? 'null') ?? h('p', { class: 'muted' }, 'This body cannot be shown as a tree.');
  if (raw === undefined) return fromParsed();
  return shownInPart(raw.length, (all) => jsonSourceTree(textOf(raw, all), !all) ?? fromParsed());
}

/**
 * The parsed body as the page shows it first: a form table, fields and
 * files, text, indented XML, or a JSON tree (of `raw`, the body's bytes,
 * when given: see needsRaw).
 */
export function parsedBody(
  delivery: { id: string; contentType: string; size: number; body: unknown },
  raw?: Uint8Array,
): HTMLElement {
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
      return shownInPart(delivery.size, (all) => formTable(body as Record<string, unknown>, all ? Infinity : SHOWN_FIRST));
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
    case 'text': {
      const text = body as string;
      return shownInPart(text.length, (all) => textView(all ? text : text.slice(0, SHOWN_FIRST)));
    }
    case 'xml': {
      const text = body as string;
      return shownInPart(text.length, (all) => xmlView(all ? text : text.slice(0, SHOWN_FIRST)));
    }
    default:
      return treeView(body, raw);
  }
}

/** The raw bytes as text (invalid UTF-8 shown with replacement characters), a large body in part first. */
export function rawText(raw: Uint8Array): HTMLElement {
  return shownInPart(raw.length, (all) => h('pre', { class: 'raw-body' }, textOf(raw, all, true)));
}
