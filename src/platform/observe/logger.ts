import { pino, type Logger } from 'pino';
import { LogDestination } from './log-destination.js';

export type { Logger };
export { LogDestination };

/** Every line's fields after `level` and `time`, as pino writes them for `base`. */
export const LOG_BASE = { service: 'reception' } as const;

/** Where each logger made by createLogger writes: a line rendered by hand goes there too (webhook-log.ts). */
const destinations = new WeakMap<Logger, pino.DestinationStream>();

/**
 * Structured JSON logs, on stdout unless another destination is given.
 * Bodies, header values, query strings and tokens are never passed to a log
 * call (test/process/logs.test.ts checks it), so no redaction pass is
 * needed: it cost a third of each log line.
 */
export function createLogger(level: string, destination: pino.DestinationStream = new LogDestination()): Logger {
  const logger = pino(
    {
      level,
      base: LOG_BASE,
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
  destinations.set(logger, destination);
  return logger;
}

/**
 * The destination that createLogger gave `logger`, whose lines are its
 * options' (level and time first, then LOG_BASE, then the fields, then
 * `msg`); undefined for any other logger (a child, one made elsewhere).
 */
export function destinationOf(logger: Logger): pino.DestinationStream | undefined {
  return destinations.get(logger);
}
