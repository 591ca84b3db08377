import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs on stdout. Bodies, header values, query strings and
 * tokens are never passed to a log call (test/process/logs.test.ts checks
 * it), so no redaction pass is needed: it cost a third of each log line.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'reception' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

export type LogDestination = ReturnType<typeof pino.destination>;

const failedDestinations = new WeakSet<LogDestination>();

/** Stdout, written asynchronously; remembers when a write failed (its reader went away). */
export function stdoutDestination(): LogDestination {
  const destination = pino.destination({ dest: 1, sync: false });
  destination.on('error', () => failedDestinations.add(destination));
  return destination;
}

/**
 * Writes out the lines still buffered and closes the destination; resolves
 * once it is closed, once a write failed, or after `ms`. Exiting through
 * this instead of `logger.flush` matters when stdout's reader is gone (as
 * with `reception | jq` and Ctrl-C): pino's exit-time flushSync retries a
 * broken pipe forever, so the process would never exit.
 */
export function endDestination(destination: LogDestination, ms = 2000): Promise<void> {
  if (failedDestinations.has(destination)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, ms);
    destination.once('close', done);
    destination.once('error', done);
    destination.end();
  });
}
