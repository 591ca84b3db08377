// Building DOM nodes. Every piece of data goes in as a text node: payloads,
// headers and source names are hostile, so nothing here ever parses HTML
// (ESLint forbids innerHTML and friends in web/).

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

// Characters that reorder the text around them (bidirectional overrides,
// embeddings, isolates and marks): in a key, `"amount\u202e": "1000.50"`
// reads as `"amount"05.0001" :"`, so a payload could make a value look like
// another. They are shown as visible escapes instead, as `reception tail`
// prints them.
// The group keeps each control in what `split` returns.
const BIDI_CONTROL = /([\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069])/u;

/** Text as DOM nodes: a text node, or, around bidirectional controls, text nodes and a marked escape for each control. */
export function textNodes(text: string): Node {
  if (!BIDI_CONTROL.test(text)) return document.createTextNode(text);
  const fragment = document.createDocumentFragment();
  text.split(BIDI_CONTROL).forEach((piece, index) => {
    if (piece === '') return;
    if (index % 2 === 0) {
      fragment.appendChild(document.createTextNode(piece));
      return;
    }
    const code = `\\u${piece.charCodeAt(0).toString(16).padStart(4, '0')}`;
    const marker = document.createElement('span');
    marker.className = 'bidi-control';
    marker.title = 'a bidirectional control character, shown as an escape';
    marker.appendChild(document.createTextNode(code));
    fragment.appendChild(marker);
  });
  return fragment;
}

/** Appends children; strings and numbers become text nodes (bidirectional controls as visible escapes). */
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
export function button(label: string, action: () => void, className = 'button', attrs: Record<string, string> = {}): HTMLButtonElement {
  return h('button', { class: className, attrs: { type: 'button', ...attrs }, on: { click: () => action() } }, label);
}
