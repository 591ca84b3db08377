/** The longest last error kept on an issue, in characters: enough for a reason, not a body. */
export const MAX_ERROR_LENGTH = 1000;

// eslint-disable-next-line no-control-regex
const UNHOLDABLE = /\u0000|\p{Cs}/gu;

/**
 * An occurrence's error as an issue keeps it: at most MAX_ERROR_LENGTH
 * characters (cut with an ellipsis), and NUL or a lone surrogate, which
 * PostgreSQL's text cannot hold, as U+FFFD, so that both stores keep the same.
 */
export function shownError(error: string): string {
  const text = error.replace(UNHOLDABLE, '\uFFFD');
  if (text.length <= MAX_ERROR_LENGTH) return text;
  // Not between the two halves of a surrogate pair.
  const cut = /[\uD800-\uDBFF]$/.test(text.slice(0, MAX_ERROR_LENGTH - 1)) ? MAX_ERROR_LENGTH - 2 : MAX_ERROR_LENGTH - 1;
  return `${text.slice(0, cut)}…`;
}
