// Short messages at the bottom of the screen, read out by screen readers.

import { h } from './dom.ts';

let region: HTMLElement | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;

export function toast(message: string, kind: 'info' | 'error' = 'info'): void {
  if (region === undefined || !region.isConnected) {
    region = h('div', { class: 'toast', attrs: { role: 'status', 'aria-live': 'polite', hidden: '' } });
    document.body.appendChild(region);
  }
  region.textContent = message;
  region.dataset.kind = kind;
  region.hidden = false;
  if (timer !== undefined) clearTimeout(timer);
  const shown = region;
  timer = setTimeout(
    () => {
      shown.hidden = true;
    },
    kind === 'error' ? 6000 : 3000,
  );
}
