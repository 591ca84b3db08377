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

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

function isToken(text: string): boolean {
  return TOKEN.test(text);
}
