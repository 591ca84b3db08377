// A JSON body as a collapsible tree of the sender's own text: parsed with
// jsonc-parser's parseTree, which keeps where each value was written, so a
// key sent twice is shown twice and `1.0e+2` reads as it was sent, where
// JSON.parse would keep the last key and make it `100`. It is tolerant too:
// the first part of a large body (body-part.ts) still makes a tree. Every
// key and value goes in as a text node.

import { parseTree, type Node as JsonNode, type ParseError } from 'jsonc-parser';
import { h, type Child } from './dom.ts';

/** Levels of the tree that start open; deeper ones open on click. */
const OPEN_LEVELS = 2;
/** Children shown before a "show more" button, so that huge arrays stay fast. */
const CHUNK = 200;

interface Entry {
  /** The key, decoded and quoted, or the index of an array item. */
  label: string;
  isIndex: boolean;
  /** A key that the same object holds more than once. */
  duplicate: boolean;
  /** Undefined where a cut-off body ends before the value. */
  value: JsonNode | undefined;
}

const SCALAR_CLASS: Partial<Record<JsonNode['type'], string>> = {
  string: 'json-string',
  number: 'json-number',
  boolean: 'json-boolean',
  null: 'json-null',
};

function entriesOf(node: JsonNode): Entry[] {
  const children = node.children ?? [];
  if (node.type === 'array') {
    return children.map((value, index) => ({ label: String(index), isIndex: true, duplicate: false, value }));
  }
  const seen = new Map<string, number>();
  for (const property of children) {
    const key = String(property.children?.[0]?.value);
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return children.map((property) => {
    const [key, value] = property.children ?? [];
    return {
      label: key === undefined ? '' : JSON.stringify(String(key.value)),
      isIndex: false,
      duplicate: (seen.get(String(key?.value)) ?? 0) > 1,
      value,
    };
  });
}

/**
 * A number as written (`1.0e+2`, `12345678901234567890`, `-0.0`), which
 * JSON.parse would change; a string decoded and quoted again, so that
 * `"caf\u00e9"` from a sender that escapes every non-ASCII character reads
 * `"café"` (the Raw tab has the bytes); `true`, `false`, `null`.
 */
function scalarText(node: JsonNode, text: string): string {
  if (node.type === 'string') return JSON.stringify(String(node.value));
  return text.slice(node.offset, node.offset + node.length);
}

function keyLabel(entry: Entry | undefined): Child {
  if (entry === undefined) return null;
  if (entry.isIndex) return h('span', { class: 'json-index' }, entry.label, ': ');
  if (!entry.duplicate) return h('span', { class: 'json-key' }, entry.label, ': ');
  return h(
    'span',
    {
      class: 'json-key json-duplicate',
      attrs: { title: 'This key is sent more than once in this object; JSON.parse would keep only the last.' },
    },
    entry.label,
    ': ',
  );
}

function summaryOf(node: JsonNode): string {
  const count = node.children?.length ?? 0;
  if (node.type === 'array') return `[ ${count} ${count === 1 ? 'item' : 'items'} ]`;
  return `{ ${count} ${count === 1 ? 'key' : 'keys'} }`;
}

/** Appends the children of a container, a chunk at a time. */
function fillChildren(list: HTMLElement, entries: Entry[], text: string, depth: number, from = 0): void {
  for (const entry of entries.slice(from, from + CHUNK)) {
    list.appendChild(h('li', {}, nodeView(entry.value, entry, text, depth + 1)));
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
              fillChildren(list, entries, text, depth, from + CHUNK);
            },
          },
        },
        `show ${Math.min(rest, CHUNK)} more of ${rest}`,
      ),
    );
    list.appendChild(more);
  }
}

function nodeView(node: JsonNode | undefined, entry: Entry | undefined, text: string, depth: number): HTMLElement {
  if (node === undefined) return h('div', { class: 'json-leaf' }, keyLabel(entry), h('span', { class: 'json-punct' }, '…'));
  if (node.type !== 'object' && node.type !== 'array') {
    return h(
      'div',
      { class: 'json-leaf' },
      keyLabel(entry),
      h('span', { class: SCALAR_CLASS[node.type] ?? '' }, scalarText(node, text)),
    );
  }
  if ((node.children?.length ?? 0) === 0) {
    return h(
      'div',
      { class: 'json-leaf' },
      keyLabel(entry),
      h('span', { class: 'json-punct' }, node.type === 'array' ? '[]' : '{}'),
    );
  }
  const list = h('ul', { class: 'json-children' });
  const details = h(
    'details',
    { class: 'json-node' },
    h('summary', {}, keyLabel(entry), h('span', { class: 'json-punct' }, summaryOf(node))),
    list,
  );
  // Children are built on first opening, so a large body costs nothing until looked at.
  let filled = false;
  const fill = (): void => {
    if (filled) return;
    filled = true;
    fillChildren(list, entriesOf(node), text, depth);
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

/** The tree of `text`, or undefined when nothing in it parses as JSON. `cut`: the text is the start of a longer body. */
export function jsonSourceTree(text: string, cut = false): HTMLElement | undefined {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: false, disallowComments: true });
  if (root === undefined || (errors.length > 0 && !cut)) return undefined;
  // No role="tree": a tree role promises treeitems and arrow-key navigation; the nested
  // <details> elements are already a disclosure structure that assistive technology knows.
  return h('div', { class: 'json-tree' }, nodeView(root, undefined, text, 0));
}
