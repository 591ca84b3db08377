import { escapeForTerminal } from '../platform/text/terminal-safe.js';
import { formatDelay } from './backoff.js';
import type { StreamStatus } from './event-stream.js';

/** Writing to stdout and stderr, and stopping on Ctrl-C, for the long-running commands. */

/** Writes to stdout and waits while the reader (a pipe, a slow terminal) has not taken what was written. */
export async function writeOut(text: string): Promise<void> {
  if (!process.stdout.write(text)) {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        process.stdout.off('drain', done);
        process.stdout.off('close', done);
        resolve();
      };
      process.stdout.once('drain', done);
      process.stdout.once('close', done);
    });
  }
}

/** One line to stderr, escaped: it may quote a server's error message or a delivery's id. */
export function writeErr(line: string): void {
  process.stderr.write(`${escapeForTerminal(line)}\n`);
}

/** Resolves once everything written to stdout so far has been handed to the OS. */
export function flushOut(): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdout.destroyed) resolve();
    else process.stdout.write('', () => resolve());
  });
}

/** A reader that goes away (`reception tail | head`) ends the command quietly. */
export function exitQuietlyOnClosedPipe(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

/**
 * An AbortSignal that fires on the first SIGINT or SIGTERM, so the command
 * can finish what it is doing and stop; a second signal exits at once.
 */
export function stopSignal(onFirst?: (signal: NodeJS.Signals) => void): AbortSignal {
  const controller = new AbortController();
  const handle = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) process.exit(130);
    onFirst?.(signal);
    controller.abort(new Error(signal));
  };
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
  return controller.signal;
}

/** Connection messages of `tail` and `listen` for the person watching (stderr). */
export function reportStatus(status: StreamStatus, url: string): void {
  if (status.kind === 'connected') {
    writeErr(status.reconnected ? `reconnected to ${url}` : `connected to ${url}; waiting for deliveries (Ctrl-C to stop)`);
  } else {
    writeErr(`connection lost (${status.reason}); reconnecting in ${formatDelay(status.retryInMs)}`);
  }
}
