// Refreshing a part of the page every few seconds while it can be seen:
// never while the tab is hidden (it catches up at once when shown again),
// never two refreshes at a time, and never again once the part has left the
// page or the session is gone.

import { Unauthorized } from './api.ts';

export class Poller {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;
  private again = false;
  private stopped = false;
  private readonly onVisibility = (): void => {
    if (document.visibilityState === 'visible') this.now();
  };

  /**
   * `refresh` runs every `everyMs` while `alive()` is true and the page is
   * visible; once `alive()` is false the poller stops for good.
   */
  constructor(
    private readonly refresh: () => Promise<void>,
    private readonly everyMs: number,
    private readonly alive: () => boolean,
  ) {}

  start(): this {
    document.addEventListener('visibilitychange', this.onVisibility);
    this.now();
    return this;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    document.removeEventListener('visibilitychange', this.onVisibility);
  }

  /** Refreshes right away (after an action), then goes on every `everyMs`. */
  now(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(), ms);
  }

  private async run(): Promise<void> {
    this.timer = undefined;
    if (this.stopped) return;
    if (!this.alive()) {
      this.stop();
      return;
    }
    // Hidden: nothing is scheduled; the visibilitychange listener starts it again.
    if (document.visibilityState !== 'visible') return;
    this.running = true;
    try {
      await this.refresh();
    } catch (error) {
      if (error instanceof Unauthorized) {
        this.stop();
        return;
      }
      // Any other failure is the refresh's to show; the next round tries again.
    } finally {
      this.running = false;
    }
    const again = this.again;
    this.again = false;
    this.schedule(again ? 0 : this.everyMs);
  }
}
