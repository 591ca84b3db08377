import { ProblemError } from '../errors/problem-catalogue.js';
import { checkSourceName } from './source-name.js';

/**
 * Whole numbers in a query string, as digits only. A schema of type integer
 * would let the validator coerce `0x10`, `1e2`, ` 5` or `Infinity` into
 * numbers; `invalid_query` is what those deserve.
 */
export const DIGITS = '^[0-9]{1,15}$';
/**
 * Digits that make a number of 1 or more, as many as the client likes: a
 * count that is only capped (a page size) takes any larger value as its
 * cap, so its length is no reason to refuse it (`Number` of 400 digits is
 * `Infinity`, which the cap turns into the cap).
 */
export const POSITIVE_DIGITS = '^(?!0+$)[0-9]+$';

/**
 * The `source` filter of the list and the stream: a name that no source
 * could have (empty, `..`, a `/`, a control character, over 128
 * characters) is `invalid_query`, not an empty answer.
 */
export function sourceFilter(source: string | undefined): string | undefined {
  if (source === undefined) return undefined;
  try {
    return checkSourceName(source);
  } catch (error) {
    const reason = error instanceof ProblemError ? error.message : 'It is not a source name.';
    throw new ProblemError('invalid_query', `source: no source could have this name. ${reason}`);
  }
}
