import { ProblemError } from '../errors/problem-catalogue.js';

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

/** A cursor of the sources list: the last name of the page, opaque to clients. */
export function encodeNameCursor(name: string): string {
  return Buffer.from(`n${name}`).toString('base64url');
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The name a sources cursor goes on after; refused unless it is exactly what encodeNameCursor hands out. */
export function decodeNameCursor(cursor: string): string {
  let text: string;
  try {
    text = strictUtf8.decode(Buffer.from(cursor, 'base64url'));
  } catch {
    text = '';
  }
  if (!text.startsWith('n') || text.length < 2 || encodeNameCursor(text.slice(1)) !== cursor) {
    throw new ProblemError('invalid_query', 'The cursor is not one this server handed out.');
  }
  return text.slice(1);
}
