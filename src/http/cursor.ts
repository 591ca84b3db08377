import { ProblemError } from '../errors.js';

/** A list cursor is an inbox position, opaque to clients. */
export function encodeCursor(seq: number): string {
  return Buffer.from(`s${seq}`).toString('base64url');
}

export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^s(\d{1,15})$/.exec(text);
  if (match?.[1] === undefined) throw new ProblemError('invalid_query', 'The cursor is not one this server handed out.');
  return Number(match[1]);
}
