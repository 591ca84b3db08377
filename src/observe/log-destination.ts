import { pino } from 'pino';

type SonicBoom = ReturnType<typeof pino.destination>;

/**
 * U+2028 and U+2029 are valid inside JSON strings, and pino writes them as
 * they are (a source name or a header value may hold them). Some readers
 * split lines on them, Node 24's `readline` among them, which would cut a
 * log line in two. Written as `\u2028` and `\u2029`, the line parses to the
 * same value. They can only occur inside strings, so the replacement is
 * safe anywhere in the line.
 */
const LINE_SEPARATORS = /[\u2028\u2029]/g;
const escapeSeparator = (char: string): string => (char === '\u2028' ? '\\u2028' : '\\u2029');

/**
 * Stdout for the logger: pino's lines are handed to sonic-boom (pino's
 * asynchronous writer) once per turn of the event loop, joined into one
 * string, instead of one at a time.
 *
 * Why: while a write is in flight, sonic-boom appends each new line to its
 * last buffered string and measures that whole string with
 * `Buffer.byteLength`, which flattens it. A commit answers about 50
 * deliveries in one turn, so each of their log lines copied and scanned the
 * lines before it: 7.7 KB allocated per delivery, 28 % of everything the
 * receive path allocated (bench/RESULTS.md). Joined once per turn, the
 * lines are copied once.
 *
 * Lines are written in the order they were logged. A line still waiting for
 * its turn is written synchronously if the process exits first.
 */
export class LogDestination implements pino.DestinationStream {
  private lines: string[] = [];
  private scheduled = false;
  private failed = false;
  private readonly target: SonicBoom;

  constructor(target: SonicBoom = pino.destination({ dest: 1, sync: false })) {
    this.target = target;
    // A failed write (stdout's reader went away) must not crash the server;
    // pino's own handler stops writing on EPIPE.
    target.on('error', () => {
      this.failed = true;
    });
    process.once('exit', this.writeBeforeExit);
  }

  write(line: string): void {
    this.lines.push(line.replace(LINE_SEPARATORS, escapeSeparator));
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.handOver);
  }

  /**
   * Writes out every line logged so far and closes stdout's writer; resolves
   * once it is closed, once a write failed, or after `ms`. Exiting through
   * this instead of `logger.flush` matters when stdout's reader is gone (as
   * with `reception | jq` and Ctrl-C): pino's exit-time flushSync retries a
   * broken pipe forever, so the process would never exit.
   */
  end(ms = 2000): Promise<void> {
    process.removeListener('exit', this.writeBeforeExit);
    if (this.failed) return Promise.resolve();
    this.handOver();
    const target = this.target;
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(done, ms);
      target.once('close', done);
      target.once('error', done);
      target.end();
    });
  }

  private readonly handOver = (): void => {
    this.scheduled = false;
    if (this.lines.length === 0 || this.failed) return;
    const chunk = this.lines.length === 1 ? (this.lines[0] as string) : this.lines.join('');
    this.lines = [];
    this.target.write(chunk);
  };

  private readonly writeBeforeExit = (): void => {
    if (this.failed || this.lines.length === 0) return;
    this.handOver();
    try {
      this.target.flushSync();
    } catch {
      // Exiting anyway: a line that cannot be written now is lost, as it
      // would be without this hook.
    }
  };
}
