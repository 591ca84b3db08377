import type { WriteStream } from 'node:tty';

export type ProgressMode = 'bar' | 'lines' | 'none';

/**
 * Progress on stderr: a bar redrawn in place on a terminal, or a plain line
 * every few seconds when stderr is a file or a pipe (logs stay readable).
 */
export class Progress {
  private lastDraw = 0;
  private readonly started = Date.now();

  constructor(
    private readonly mode: ProgressMode,
    /** How many items there are, when known. */
    private readonly total: number | undefined,
    private readonly out: NodeJS.WritableStream & Partial<Pick<WriteStream, 'columns'>> = process.stderr,
    private readonly linesEveryMs = 2000,
  ) {}

  update(done: number): void {
    const now = Date.now();
    if (this.mode === 'bar' && now - this.lastDraw >= 100) {
      this.lastDraw = now;
      this.out.write(`\r${this.bar(done)}\u001b[K`);
    } else if (this.mode === 'lines' && now - this.lastDraw >= this.linesEveryMs) {
      this.lastDraw = now;
      this.out.write(`export: ${this.count(done)} so far (${this.rate(done)})\n`);
    }
  }

  finish(done: number): void {
    const seconds = ((Date.now() - this.started) / 1000).toFixed(1);
    if (this.mode === 'bar') this.out.write(`\r${this.bar(done, true)}\u001b[K\n`);
    if (this.mode !== 'none') this.out.write(`export: done, ${done.toLocaleString('en-US')} deliveries in ${seconds} s\n`);
  }

  private bar(done: number, finished = false): string {
    const total = this.total;
    if (total === undefined || total === 0) return `export: ${this.count(done)}  ${this.rate(done)}`;
    const fraction = finished ? 1 : Math.min(1, done / total);
    const width = Math.max(10, Math.min(40, (this.out.columns ?? 80) - 50));
    const filled = Math.round(fraction * width);
    const percent = `${Math.floor(fraction * 100)}%`.padStart(4);
    return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${percent}  ${this.count(done)}  ${this.rate(done)}`;
  }

  private count(done: number): string {
    const text = done.toLocaleString('en-US');
    return this.total === undefined ? `${text} deliveries` : `${text} of ${this.total.toLocaleString('en-US')} deliveries`;
  }

  private rate(done: number): string {
    const seconds = Math.max(0.001, (Date.now() - this.started) / 1000);
    return `${Math.round(done / seconds).toLocaleString('en-US')}/s`;
  }
}
