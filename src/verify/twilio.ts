import { createHash } from 'node:crypto';
import { parse as parseQuery, stringify as stringifyQuery } from 'node:querystring';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import { classifyMediaType } from '../body/media-type.js';
import { parseFormBody, type FormBody } from '../body/parse-form.js';
import { constantTimeEqual, decodeBase64, decodeHex, hmac, matchingKey } from './constant-time.js';
import {
  VerifyConfigError,
  checkSecrets,
  fail,
  headerValue,
  pass,
  type Verifier,
  type VerifyInput,
  type VerifyResult,
} from './verifier.js';

export interface TwilioOptions {
  /** Auth tokens (primary and secondary during a rotation). */
  secrets: readonly string[];
  /** The URL configured at Twilio for this source, without a query string of its own. */
  publicUrl: string;
}

/**
 * Twilio: `X-Twilio-Signature`, a base64 HMAC-SHA1 keyed by the auth token
 * over the URL Twilio called (`publicUrl` followed by the request's own query
 * string, if any), then for a form body each parameter's name and value,
 * sorted by name. A JSON (or other) body is instead carried by the URL's
 * `bodySHA256` parameter, the hex SHA-256 of the raw body, and the signature
 * covers the URL alone. Twilio sometimes signs the URL with its default port
 * (`:443`, `:80`) and sometimes without, so both are tried, and, when neither
 * matches, the escaped forms that Twilio's own library falls back to
 * (`escapedVariants`). No timestamp. The delivery id is
 * `I-Twilio-Idempotency-Token`.
 */
export class TwilioVerifier implements Verifier {
  readonly scheme = 'twilio';
  private readonly secrets: readonly string[];
  private readonly publicUrl: string;

  constructor(options: TwilioOptions) {
    this.secrets = checkSecrets(options.secrets);
    this.publicUrl = checkPublicUrl(options.publicUrl);
  }

  verify(input: VerifyInput): VerifyResult {
    const header = headerValue(input.headers, 'x-twilio-signature');
    if (header === undefined) return fail('missing_signature');
    const candidate = decodeBase64(header);
    if (candidate === undefined) return fail('malformed_signature');

    const url = input.query === '' ? this.publicUrl : `${this.publicUrl}?${input.query}`;
    const bodyHashes = new URLSearchParams(input.query).getAll('bodySHA256');
    let params = '';
    if (bodyHashes.length === 0) {
      if (classifyMediaType(input.contentType) !== 'form') return fail('missing_body_hash');
      const form = parseForm(input.raw);
      if (form === undefined) return fail('malformed_body');
      params = signedParams(form);
    }

    const signedBy = (urls: string[]): number =>
      matchingKey(this.secrets, [candidate], (secret) => urls.map((variant) => hmac('sha1', secret, variant, params)));
    const asReceived = urlVariants(url);
    let index = signedBy(asReceived);
    if (index === -1) {
      const escaped = escapedVariants(url).filter((variant) => !asReceived.includes(variant));
      if (escaped.length > 0) index = signedBy(escaped);
    }
    if (index === -1) return fail('signature_mismatch');

    if (bodyHashes.length > 0) {
      const claimed = bodyHashes.length === 1 ? decodeHex(bodyHashes[0] as string) : undefined;
      const actual = createHash('sha256').update(input.raw).digest();
      if (claimed === undefined || !constantTimeEqual(claimed, actual)) return fail('body_hash_mismatch');
    }
    return pass(index, headerValue(input.headers, 'i-twilio-idempotency-token'));
  }
}

function checkPublicUrl(publicUrl: unknown): string {
  if (typeof publicUrl !== 'string' || !URL.canParse(publicUrl)) {
    throw new VerifyConfigError('publicUrl', 'twilio needs publicUrl, the absolute URL configured at Twilio (https://…)');
  }
  const url = new URL(publicUrl);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new VerifyConfigError('publicUrl', 'expected an http or https URL');
  }
  if (url.username !== '' || url.password !== '') {
    throw new VerifyConfigError('publicUrl', 'expected no user name or password in the URL');
  }
  if (publicUrl.includes('?') || publicUrl.includes('#')) {
    throw new VerifyConfigError('publicUrl', 'expected no query string or fragment: the request brings its own query');
  }
  return publicUrl;
}

function parseForm(raw: Buffer): FormBody | undefined {
  try {
    return parseFormBody(raw);
  } catch (error) {
    if (error instanceof ProblemError) return undefined;
    throw error;
  }
}

/**
 * The form's part of the signed string, as Twilio's own library builds it:
 * names sorted (by UTF-16 code units), each followed by its value; a repeated
 * name contributes each distinct value, sorted.
 */
function signedParams(form: FormBody): string {
  let text = '';
  for (const name of Object.keys(form).sort()) {
    const value = form[name] ?? '';
    const values = typeof value === 'string' ? [value] : [...new Set(value)].sort();
    for (const each of values) text += name + each;
  }
  return text;
}

const AUTHORITY = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i;

/**
 * The forms Twilio's own library falls back to when the URL as received
 * does not match: the URL as WHATWG `URL` writes it (`'` in the query as
 * `%27`...), with and without the default port, and each with its query
 * re-encoded as Node's legacy `querystring` does, for Twilio back ends that
 * signed an escaped form of what arrived unescaped.
 */
function escapedVariants(url: string): string[] {
  if (!URL.canParse(url)) return [];
  const normalized = urlVariants(new URL(url).toString());
  return [...new Set([...normalized, ...normalized.map(withLegacyQuery)])];
}

function withLegacyQuery(url: string): string {
  const start = url.indexOf('?');
  if (start === -1 || start === url.length - 1) return url;
  return `${url.slice(0, start)}?${stringifyQuery(parseQuery(url.slice(start + 1)))}`;
}

/** The URL as configured, without its default port, and with it. */
function urlVariants(url: string): string[] {
  const match = AUTHORITY.exec(url);
  if (match === null) return [url];
  const [prefix, scheme = '', authority = ''] = match;
  const rest = url.slice(prefix.length);
  const defaultPort = scheme.toLowerCase() === 'https://' ? ':443' : ':80';
  const portStart = authority.indexOf(':', authority.lastIndexOf(']') + 1);
  const host = portStart === -1 ? authority : authority.slice(0, portStart);
  const port = portStart === -1 ? '' : authority.slice(portStart);
  const variants = [url];
  if (port === '') variants.push(scheme + host + defaultPort + rest);
  else if (port === defaultPort) variants.push(scheme + host + rest);
  return variants;
}
