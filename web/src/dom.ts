// Building DOM nodes. Every piece of data goes in as a text node: payloads,
// headers and source names are hostile, so nothing here ever parses HTML
// (ESLint forbids innerHTML and friends in web/).

import { BIDI_CONTROL, codePointEscape, splitInvisible } from '../../src/platform/text/invisible.js';

export type Child = Node | string | number | null | undefined | false;

export interface Props {
  class?: string;
  /** Attributes set from constants or encoded values, never `on*` handlers. */
  attrs?: Record<string, string>;
  on?: Partial<{ [K in keyof HTMLElementEventMap]: (event: HTMLElementEventMap[K]) => void }>;
}

/** `h('p', { class: 'note' }, 'text', child)`: an element whose strings become text nodes. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.class !== undefined) element.className = props.class;
  for (const [name, value] of Object.entries(props.attrs ?? {})) {
    if (/^on/i.test(name)) throw new Error(`event handler attributes are not allowed: ${name}`);
    element.setAttribute(name, value);
  }
  for (const [type, listener] of Object.entries(props.on ?? {})) {
    element.addEventListener(type, listener as EventListener);
  }
  append(element, ...children);
  return element;
}

// Characters that cannot be seen, or that change how the text around them
// reads, are shown as visible escapes (`\u200b`), as `reception tail` prints
// them: the invisible characters of src/platform/text/invisible.ts (zero-width
// characters, fillers, variation selectors outside an emoji, tags, the BOM,
// bidirectional controls: in a key, `"amount\u202e": "1000.50"` would read
// as `"amount"05.0001" :"`), and C0 and C1 controls save the tab and the line
// breaks that a raw body keeps. `stripe` and `stripe` + U+200B then no longer
// look the same.
const CONTROLS = '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f';

/** Text as DOM nodes: a text node, or text nodes and a marked escape for each character that cannot be seen. */
export function textNodes(text: string): Node {
  const pieces = splitInvisible(text, CONTROLS);
  if (pieces.length === 1) return document.createTextNode(text);
  const fragment = document.createDocumentFragment();
  pieces.forEach((piece, index) => {
    if (piece === '') return;
    if (index % 2 === 0) {
      fragment.appendChild(document.createTextNode(piece));
      return;
    }
    const bidi = BIDI_CONTROL.test(piece);
    const marker = document.createElement('span');
    marker.className = bidi ? 'bidi-control' : 'invisible-char';
    marker.title = bidi
      ? 'a bidirectional control character, shown as an escape'
      : 'an invisible or control character, shown as an escape';
    marker.appendChild(document.createTextNode(codePointEscape(piece)));
    fragment.appendChild(marker);
  });
  return fragment;
}

/** Appends children; strings and numbers become text nodes (invisible characters as visible escapes). */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : textNodes(String(child)));
  }
}

/** Removes every child of `node`, then appends the given ones. */
export function replaceChildren(node: Node, ...children: Child[]): void {
  while (node.firstChild !== null) node.removeChild(node.firstChild);
  append(node, ...children);
}

/** A button that runs `action` on click. */
export function button(
  label: string,
  action: () => void,
  className = 'button',
  attrs: Record<string, string> = {},
): HTMLButtonElement {
  return h('button', { class: className, attrs: { type: 'button', ...attrs }, on: { click: () => action() } }, label);
}
