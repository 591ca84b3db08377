export type BodyKind = 'json' | 'form';

/**
 * Classifies a Content-Type header value (CONTRACT 1): `application/json`
 * and `application/*+json` are JSON, `application/x-www-form-urlencoded` is
 * form data, anything else (or nothing) is unsupported. The media type is
 * compared case-insensitively and parameters such as `charset` are allowed.
 */
export function classifyMediaType(contentType: string | undefined): BodyKind | undefined {
  if (contentType === undefined) return undefined;
  const semicolon = contentType.indexOf(';');
  const essence = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  if (essence === 'application/json') return 'json';
  if (essence === 'application/x-www-form-urlencoded') return 'form';
  if (essence.startsWith('application/') && essence.endsWith('+json') && isToken(essence.slice(12, -5))) {
    return 'json';
  }
  return undefined;
}

/**
 * True when the request carries Content-Type on several header lines that
 * disagree. Content-Type is no list (RFC 9110 8.3): Node keeps the first
 * line and drops the others, a proxy in front may keep the last, and the
 * body would be parsed as one type and signed or read as another. The same
 * value repeated (in any letter case) is harmless and taken.
 */
export function hasConflictingContentTypes(rawHeaders: readonly string[]): boolean {
  let first: string | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length !== 12 || name.toLowerCase() !== 'content-type') continue;
    const value = (rawHeaders[i + 1] as string).trim().toLowerCase();
    if (first === undefined) first = value;
    else if (value !== first) return true;
  }
  return false;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

function isToken(text: string): boolean {
  return TOKEN.test(text);
}
