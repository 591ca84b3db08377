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

/** Appends children; strings and numbers become text nodes. */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
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
