// What the top bar's panels (issues, destinations, refusals) share: the
// toggle's aria-expanded, Escape to close and give the focus back to the
// toggle, and a poller that refreshes the panel every few seconds while it
// is open (poller.ts: never while the tab is hidden).

import { Poller } from './poller.ts';

export class SidePanel {
  private poller: Poller | undefined;

  constructor(
    private readonly element: HTMLElement,
    private readonly toggle: HTMLElement,
    private readonly refresh: () => Promise<void>,
    private readonly everyMs: number,
  ) {
    element.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.stopPropagation();
        this.close();
        toggle.focus();
      }
    });
  }

  get isOpen(): boolean {
    return !this.element.hidden;
  }

  /** Shows the panel and refreshes it at once, then every `everyMs`. */
  open(): void {
    this.element.hidden = false;
    this.toggle.setAttribute('aria-expanded', 'true');
    this.restart();
  }

  /** Polls afresh from now (what the panel shows changed). */
  restart(): void {
    this.poller?.stop();
    this.poller = new Poller(this.refresh, this.everyMs, () => this.isOpen && this.element.isConnected).start();
  }

  /** Refreshes right away (after an action), if open. */
  now(): void {
    this.poller?.now();
  }

  close(): void {
    this.element.hidden = true;
    this.toggle.setAttribute('aria-expanded', 'false');
    this.poller?.stop();
    this.poller = undefined;
  }
}
