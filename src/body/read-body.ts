import type { Readable } from 'node:stream';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import { BodyBudgetSpentError, type BodyBudget } from './body-budget.js';

/**
 * Reads a request body into one Buffer, refusing it with `payload_too_large`
 * as soon as more than `limit` bytes have arrived: the rest is never
 * buffered. The bytes are held against `budget` while they arrive; a body
 * that finds it spent is refused (`BodyBudgetSpentError`: 503, retry later).
 * The caller answers and closes the connection.
 */
export function readBody(stream: Readable, limit: number, budget: BodyBudget): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      budget.give(size);
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
    };
    const refuse = (error: Error): void => {
      cleanup();
      stream.pause();
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      if (size + chunk.length > limit) {
        refuse(new BodyTooLargeError(limit, size + chunk.length));
        return;
      }
      if (!budget.take(chunk.length, size)) {
        refuse(new BodyBudgetSpentError(budget.bytes, [...chunks, chunk]));
        return;
      }
      size += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    // Node reports a request cut by its timeout, or by the sender, as an
    // error ("aborted") before 'close': either way the body will not complete.
    const onError = (): void => {
      cleanup();
      reject(new BodyAbortedError(chunks, size));
    };
    const onClose = (): void => {
      cleanup();
      reject(new BodyAbortedError(chunks, size));
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/** The body is larger than the limit: `received` bytes had arrived when it was refused. */
export class BodyTooLargeError extends ProblemError {
  constructor(
    limit: number,
    readonly received: number,
  ) {
    super('payload_too_large', `The body is larger than ${limit} bytes.`);
    this.name = 'BodyTooLargeError';
  }
}

/**
 * The body stopped before it was complete: the sender went away, or Node's
 * parser cut the request (its timeout, a broken chunk). `received` holds
 * what had arrived, `size` bytes, for a refusal's preview.
 */
export class BodyAbortedError extends Error {
  constructor(
    readonly received: readonly Buffer[] = [],
    readonly size = 0,
  ) {
    super('The request was aborted before its body was complete.');
    this.name = 'BodyAbortedError';
  }
}
