import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs on stdout. Bodies are never logged; the redact paths
 * are a second line of defence for credentials that reach a log call.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'reception' },
      redact: {
        paths: ['token', 'authorization', 'headers.authorization', 'headers.cookie', 'req.headers.authorization', 'req.headers.cookie'],
        censor: '[redacted]',
      },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
