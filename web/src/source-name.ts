// A source name as the page shows it. Sources are named by whoever sends to
// them, so a name may try to pass for another: `stripe` + U+200B shows its
// escape (dom.ts), and `ѕtripe`, whose first letter is Cyrillic, is marked
// as mixing scripts, with the scripts named in its title.

import { mixedScripts } from '../../src/platform/text/mixed-script.js';
import { h, textNodes } from './dom.ts';

function listed(words: readonly string[]): string {
  return words.length <= 2 ? words.join(' and ') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1] ?? ''}`;
}

/** The name as DOM nodes: its text with escapes, after a "mixed scripts" mark when its letters mix scripts. */
export function sourceName(name: string): Node {
  const scripts = mixedScripts(name);
  if (scripts === undefined) return textNodes(name);
  const fragment = document.createDocumentFragment();
  fragment.append(
    h(
      'span',
      {
        class: 'mixed-script',
        attrs: { title: `This name mixes ${listed(scripts)} letters: it may imitate the name of another source.` },
      },
      'mixed scripts',
    ),
    textNodes(name),
  );
  return fragment;
}
