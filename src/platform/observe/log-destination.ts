import { writeSync } from 'node:fs';
import type { pino } from 'pino';
import sonicBoom from 'sonic-boom';

type SonicBoom = sonicBoom.SonicBoom;

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
 * its turn is written synchronously if the process exits first. A line
 * logged after `end()` (a request cut off by the shutdown finishes after
 * the writer was told to close) waits for the writer to close and is then
 * written synchronously to stdout, instead of reaching a closed writer,
 * which throws and would turn a clean exit into a crash.
 *
 * A write that fails (stdout's reader went away: EPIPE; the terminal was
 * closed: EIO; EBADF...) loses that line and every later one, and nothing
 * else: no retry, no exit-time flush. The writer is sonic-boom 5, made here
 * rather than by `pino.destination`: pino's destination (sonic-boom 4)
 * registers an exit hook that flushes it synchronously, and sonic-boom 4's
 * synchronous flush retries every error but EAGAIN forever, every 100 ms,
 * so a process whose terminal had hung up never exited (SIGTERM logged its
 * lines, then hung in `process.exit`). sonic-boom 5 throws those errors.
 */
export class LogDestination implements pino.DestinationStream {
  private lines: string[] = [];
  private scheduled = false;
  private failed = false;
  /** `end()` was called: lines wait for the writer to close. */
  private ending = false;
  /** The writer closed: lines are written at once, synchronously. */
  private closed = false;
  private readonly target: SonicBoom;

  /** Where lines logged after the writer closed go: stdout, when the writer is the default one to stdout. */
  private readonly directFd: number | undefined;

  /**
   * @param transform rewrites each line before it is queued (the short
   *   lines for a terminal, `prettyLine`); JSON lines pass as they are without it.
   */
  constructor(
    target?: SonicBoom,
    private readonly transform?: (line: string) => string,
  ) {
    this.target = target ?? new sonicBoom.SonicBoom({ fd: 1, sync: false });
    this.directFd = target === undefined ? 1 : undefined;
    // A failed write (stdout's reader went away, the terminal hung up) must
    // not crash the server; nothing is written to the writer after it.
    this.target.on('error', () => {
      this.failed = true;
    });
    process.once('exit', this.writeBeforeExit);
  }

  write(line: string): void {
    const escaped = this.transform === undefined ? line.replace(LINE_SEPARATORS, escapeSeparator) : this.transform(line);
    if (this.closed) {
      this.writeNow(escaped);
      return;
    }
    this.lines.push(escaped);
    if (this.scheduled || this.ending) return;
    this.scheduled = true;
    setImmediate(this.handOver);
  }

  /**
   * Writes out every line logged so far and closes stdout's writer; resolves
   * once it is closed, once a write failed, or after `ms`. Exiting through
   * this instead of `logger.flush` matters when stdout's reader is gone (as
   * with `reception | jq` and Ctrl-C): a synchronous flush would meet the
   * broken pipe at exit; after `end()` the exit hook does nothing.
   */
  end(ms = 2000): Promise<void> {
    process.removeListener('exit', this.writeBeforeExit);
    if (this.failed) return Promise.resolve();
    this.handOver();
    this.ending = true;
    const target = this.target;
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.closed = true;
        const rest = this.lines.join('');
        this.lines = [];
        this.writeNow(rest);
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
    if (this.lines.length === 0 || this.failed || this.ending) return;
    const chunk = this.lines.length === 1 ? (this.lines[0] as string) : this.lines.join('');
    this.lines = [];
    this.target.write(chunk);
  };

  /** Writes at once, to stdout only: a file's descriptor is closed with its writer, and may be reused. */
  private writeNow(chunk: string): void {
    if (chunk === '' || this.failed || this.directFd === undefined) return;
    try {
      writeSync(this.directFd, chunk);
    } catch {
      // stdout's reader is gone: the line is lost, the exit stays clean.
    }
  }

  private readonly writeBeforeExit = (): void => {
    if (this.failed || this.lines.length === 0) return;
    this.handOver();
    try {
      // sonic-boom 5 throws a failed write (EIO, EPIPE, EBADF...) instead of retrying it.
      this.target.flushSync();
    } catch {
      // Exiting anyway: a line that cannot be written now is lost, as it
      // would be without this hook.
    }
  };
}
