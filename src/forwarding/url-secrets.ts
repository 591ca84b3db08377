/**
 * A broker URL's credentials (`amqp://user:password@host`, a NATS token as
 * `nats://token@host`) never reach a log, an error or the API: every text
 * that a broker client produced is passed through `withoutUrlSecrets`.
 */

const USERINFO = /(\/\/)[^@/\s]*@/g;

/**
 * The text with any `//userinfo@` replaced by `//***@`, and the URL's
 * password (or, without one, its user: a token) replaced by `***` wherever
 * it appears, raw or decoded (but a one- or two-character one, which would
 * mangle every message and protects nothing).
 */
export function withoutUrlSecrets(text: string, url: URL): string {
  let shown = text.replace(USERINFO, '$1***@');
  for (const secret of secretsOf(url)) shown = shown.split(secret).join('***');
  return shown;
}

function secretsOf(url: URL): string[] {
  const secrets = new Set<string>();
  const raw = url.password === '' ? url.username : url.password;
  secrets.add(raw);
  try {
    secrets.add(decodeURIComponent(raw));
  } catch {
    // Not percent-encoded text: the raw form is enough.
  }
  for (const secret of secrets) if (secret.length < 3) secrets.delete(secret);
  // Longest first, so that the decoded form inside the raw one is replaced whole.
  return [...secrets].sort((a, b) => b.length - a.length);
}

/** The URL as the API and the logs show it: scheme, host and path; no credentials, no query. */
export function shownUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}${url.search === '' ? '' : '?…'}`;
}
