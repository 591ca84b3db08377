// A large body is shown in part first: its first SHOWN_FIRST bytes, with a
// "Show all" button that draws the whole of it. Drawing megabytes of text
// or a tree of them holds the page up; most of the time the start is what
// one looks for.

import { button, h, replaceChildren } from './dom.ts';
import { formatSize } from './format.ts';

/** Bodies up to this size are shown whole at once. */
export const SHOWN_FIRST = 256 * 1024;

/**
 * `draw(false)` under a note saying what is shown, with "Show all" to swap
 * it for `draw(true)`; just `draw(true)` for a body of `size` bytes that is
 * not over SHOWN_FIRST.
 */
export function shownInPart(size: number, draw: (all: boolean) => HTMLElement): HTMLElement {
  if (size <= SHOWN_FIRST) return draw(true);
  const area = h('div', { class: 'body-part' });
  const showAll = (): void => {
    replaceChildren(area, h('p', { class: 'muted' }, 'Drawing all of it…'));
    // A frame first, so that the note shows before a long draw.
    requestAnimationFrame(() => replaceChildren(area, draw(true)));
  };
  replaceChildren(
    area,
    h(
      'p',
      { class: 'part-note' },
      `This body is ${formatSize(size)}: its first ${formatSize(SHOWN_FIRST)} are shown. `,
      button('Show all', showAll, 'button', { 'data-action': 'show-all' }),
    ),
    draw(false),
  );
  return area;
}

/**
 * The first SHOWN_FIRST bytes as text (a character cut in two at the end
 * reads as U+FFFD), or all of them; `keepBom` keeps a leading byte order
 * mark (the raw view shows it, a parser must not see it).
 */
export function textOf(raw: Uint8Array, all: boolean, keepBom = false): string {
  return new TextDecoder('utf-8', { ignoreBOM: keepBom }).decode(all ? raw : raw.subarray(0, SHOWN_FIRST));
}
