/** How a body is parsed, by its media type (CONTRACT 1 and 9). */
export type BodyKind = 'json' | 'form' | 'multipart' | 'text' | 'xml';

/** What a source's `accept` list may name (CONTRACT 9): a kind, or `any` for every other type (or none). */
export const ACCEPT_KINDS = ['json', 'form', 'multipart', 'text', 'xml', 'any'] as const;
export type AcceptKind = (typeof ACCEPT_KINDS)[number];

/** A source that names no `accept` list takes these. */
export const DEFAULT_ACCEPT: readonly AcceptKind[] = ['json', 'form'];

/** The media types each kind takes, as answers and docs name them. */
export const KIND_MEDIA_TYPES: Readonly<Record<BodyKind, string>> = {
  json: 'application/json, application/*+json',
  form: 'application/x-www-form-urlencoded',
  multipart: 'multipart/form-data',
  text: 'text/plain',
  xml: 'application/xml, text/xml, application/*+xml',
};

/**
 * Classifies a Content-Type header value: `application/json` and
 * `application/*+json` are JSON, `application/x-www-form-urlencoded` form
 * data, `multipart/form-data` multipart, `text/plain` text,
 * `application/xml`, `text/xml` and `application/*+xml` XML; anything
 * else (or nothing) no kind. The media type is compared case-insensitively
 * and parameters such as `charset` are allowed. Whether a source takes the
 * kind is its `accept` list's say (`bodyKindFor`).
 */
export function classifyMediaType(contentType: string | undefined): BodyKind | undefined {
  const essence = mediaTypeEssence(contentType);
  if (essence === undefined) return undefined;
  switch (essence) {
    case 'application/json':
      return 'json';
    case 'application/x-www-form-urlencoded':
      return 'form';
    case 'multipart/form-data':
      return 'multipart';
    case 'text/plain':
      return 'text';
    case 'application/xml':
    case 'text/xml':
      return 'xml';
    default:
      break;
  }
  if (essence.startsWith('application/') && essence.endsWith('+json') && isToken(essence.slice(12, -5))) return 'json';
  if (essence.startsWith('application/') && essence.endsWith('+xml') && isToken(essence.slice(12, -4))) return 'xml';
  return undefined;
}

/** The media type without parameters, trimmed and in lower case; undefined for no header. */
export function mediaTypeEssence(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const semicolon = contentType.indexOf(';');
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

/** How a source that takes `accept` parses a body of this type: its kind, `any`, or undefined (refused, 415). */
export function bodyKindFor(contentType: string | undefined, accept: readonly AcceptKind[]): BodyKind | 'any' | undefined {
  const kind = classifyMediaType(contentType);
  if (kind !== undefined && accept.includes(kind)) return kind;
  return accept.includes('any') ? 'any' : undefined;
}

/**
 * The value of a media type parameter (`charset`), unquoted, in lower
 * case; undefined when absent. Enough for the parameters read here, which
 * hold tokens.
 */
export function mediaTypeParameter(contentType: string, name: string): string | undefined {
  for (const piece of contentType.split(';').slice(1)) {
    const equals = piece.indexOf('=');
    if (equals === -1 || piece.slice(0, equals).trim().toLowerCase() !== name) continue;
    const value = piece.slice(equals + 1).trim();
    return (value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value).toLowerCase();
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
