import { request as httpRequest, validateHeaderName, validateHeaderValue } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';
import type { DeliveryJson } from '../api/schemas.js';

/**
 * Sending a stored delivery again (`listen`, `replay`): its method, its
 * headers in their order and spelling, and its exact raw bytes, so that the
 * target can still verify the provider's signature. Never re-serialized.
 */

/** Headers about the connection that carried the delivery to Reception, not about the delivery (RFC 9110 7.6.1). */
export const DROPPED_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  // Set anew for the target: its own host, the length of the bytes sent.
  'host',
  'content-length',
  // Asks the peer for a 100 Continue: a property of that hop.
  'expect',
]);

/** The value Reception stores in place of a redacted header (authorization, cookie...). */
export const REDACTED_VALUE = '[redacted]';

/**
 * The delivery's headers minus hop-by-hop ones (including those the
 * `Connection` header names), `host`, `content-length`, redacted values and
 * anything Node would refuse to send.
 */
export function forwardableHeaders(headers: ReadonlyArray<readonly [string, string]>): Array<[string, string]> {
  const named = new Set<string>();
  for (const [name, value] of headers) {
    if (name.toLowerCase() === 'connection') {
      for (const token of value.split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const kept: Array<[string, string]> = [];
  for (const [name, value] of headers) {
    const lower = name.toLowerCase();
    if (DROPPED_HEADERS.has(lower) || named.has(lower) || value === REDACTED_VALUE) continue;
    try {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch {
      continue;
    }
    kept.push([name, value]);
  }
  return kept;
}

/** The target URL with the delivery's own query string appended (some providers sign it). */
export function targetFor(base: URL, query: string): URL {
  const url = new URL(base);
  if (query !== '') url.search = url.search === '' ? `?${query}` : `${url.search}&${query}`;
  return url;
}

export interface ForwardResult {
  status: number;
  statusText: string;
  ms: number;
}

export interface ForwardOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Sends one delivery to `base` (plus the delivery's query string) and
 * resolves with the target's status once its answer has been read.
 * Rejects when the target cannot be reached or does not answer in time.
 */
export function forwardDelivery(base: URL, delivery: DeliveryJson, raw: Buffer, options: ForwardOptions): Promise<ForwardResult> {
  const url = targetFor(base, delivery.query);
  const flat: string[] = ['Host', url.host];
  for (const [name, value] of forwardableHeaders(delivery.headers)) flat.push(name, value);
  flat.push('Content-Length', String(raw.length));
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = send(url, {
      method: delivery.method,
      // An array keeps the order, the spelling and repeated names; Node then adds only Connection.
      headers: flat,
      timeout: options.timeoutMs,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    req.on('timeout', () => req.destroy(new Error(`the target did not answer within ${options.timeoutMs} ms`)));
    req.on('error', reject);
    req.on('response', (res) => {
      res.resume();
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? '',
          ms: Math.round(performance.now() - started),
        }),
      );
    });
    req.end(raw);
  });
}

/** True when the target is not there right now (502, 503, 504): try the same delivery again later. */
export function targetUnavailable(status: number): boolean {
  return status === 502 || status === 503 || status === 504;
}
