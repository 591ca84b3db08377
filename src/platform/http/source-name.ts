import { ProblemError } from '../errors/problem-catalogue.js';

export const MAX_SOURCE_CHARS = 128;

// C0 controls, DEL and C1 controls.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;

/**
 * Decodes and checks the `{source}` path segment (CONTRACT 1): 1 to 128
 * Unicode characters after percent-decoding, valid UTF-8, no control
 * characters, no `/`, not `.` or `..`. Throws `invalid_source` otherwise.
 */
export function decodeSourceName(segment: string): string {
  let name: string;
  try {
    name = decodeURIComponent(segment);
  } catch {
    throw new ProblemError('invalid_source', 'The source name is not valid percent-encoded UTF-8.');
  }
  return checkSourceName(name);
}

/** Checks a source name already decoded, as `decodeSourceName` does; throws `invalid_source`. */
export function checkSourceName(name: string): string {
  if (name.length === 0) {
    throw new ProblemError('invalid_source', 'The source name is empty.');
  }
  if (name.includes('/')) {
    throw new ProblemError('invalid_source', 'The source name may not contain "/".');
  }
  if (name === '.' || name === '..') {
    throw new ProblemError('invalid_source', 'The source name may not be "." or "..".');
  }
  if (CONTROL.test(name)) {
    throw new ProblemError('invalid_source', 'The source name may not contain control characters.');
  }
  if (countCodePoints(name) > MAX_SOURCE_CHARS) {
    throw new ProblemError('invalid_source', `The source name is longer than ${MAX_SOURCE_CHARS} characters.`);
  }
  return name;
}

function countCodePoints(text: string): number {
  if (text.length <= MAX_SOURCE_CHARS) return text.length;
  return Array.from(text).length;
}
