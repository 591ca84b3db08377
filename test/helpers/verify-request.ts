import type { IncomingHttpHeaders } from 'node:http';
import { expect } from 'vitest';
import type { Verifier, VerifyFailure, VerifyInput, VerifyResult } from '../../src/verify/verifier.js';

/** A fixed "now" for tests that sign with a chosen timestamp. */
export const NOW_MS = 1_700_000_000_000;
export const NOW_SECONDS = NOW_MS / 1000;

export interface RequestParts {
  body?: string | Buffer;
  headers?: IncomingHttpHeaders;
  query?: string;
  contentType?: string;
  nowMs?: number;
}

/** A VerifyInput with lower-case header names, as Node gives them. */
export function request(parts: RequestParts = {}): VerifyInput {
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(parts.headers ?? {})) headers[name.toLowerCase()] = value;
  const body = parts.body ?? '';
  return {
    raw: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
    headers,
    query: parts.query ?? '',
    contentType: parts.contentType ?? 'application/json',
    nowMs: parts.nowMs ?? NOW_MS,
  };
}

/** The same request with one header set (or removed when `value` is undefined). */
export function withHeader(input: VerifyInput, name: string, value: string | string[] | undefined): VerifyInput {
  const headers: IncomingHttpHeaders = { ...input.headers };
  if (value === undefined) delete headers[name];
  else headers[name] = value;
  return { ...input, headers };
}

export function withBody(input: VerifyInput, body: string | Buffer): VerifyInput {
  return { ...input, raw: typeof body === 'string' ? Buffer.from(body, 'utf8') : body };
}

export function headerOf(input: VerifyInput, name: string): string {
  const value = input.headers[name];
  if (typeof value !== 'string') throw new Error(`the test request has no ${name} header`);
  return value;
}

export function expectPass(result: VerifyResult, expected: { secretIndex?: number; deliveryId?: string } = {}): void {
  expect(result).toEqual({ ok: true, secretIndex: expected.secretIndex ?? 0, ...deliveryIdPart(expected.deliveryId) });
}

function deliveryIdPart(deliveryId: string | undefined): { deliveryId?: string } {
  return deliveryId === undefined ? {} : { deliveryId };
}

export function expectFailure(result: VerifyResult, reason: VerifyFailure): void {
  expect(result).toEqual({ ok: false, reason });
}

/**
 * Runs the verifier and fails the test if it throws: a bad signature must be
 * answered (401), never raise (500).
 */
export function verifyQuietly(verifier: Verifier, input: VerifyInput): VerifyResult {
  let result: VerifyResult | undefined;
  expect(() => {
    result = verifier.verify(input);
  }).not.toThrow();
  if (result === undefined) throw new Error('unreachable: verify returned nothing');
  return result;
}

/**
 * Signatures that must all fail, made from a valid one: junk appended,
 * truncated, lengthened, emptied, wrong alphabet.
 */
export function hexMutations(hex: string): string[] {
  return [
    `${hex}zz`,
    `${hex}0`,
    `${hex}00`,
    hex.slice(0, -2),
    hex.slice(0, -1),
    `${hex.slice(0, -1)}g`,
    hex.slice(0, 32),
    '',
    'zz',
    ' ',
    `${hex} ${hex}`,
    `${hex}\u00e9`,
    Buffer.from(hex).toString('base64'),
  ];
}

export function base64Mutations(base64: string): string[] {
  return [
    `${base64}zz`,
    `${base64}!!`,
    `${base64}AAAA`,
    `${base64}=`,
    base64.replace(/=+$/, ''),
    base64.slice(0, -4),
    `!${base64}`,
    `${base64.slice(0, 4)}*${base64.slice(4)}`,
    base64.replaceAll('+', '-').replaceAll('/', '_') + '-_',
    '',
    '====',
    'A',
    Buffer.from(base64, 'base64').toString('hex'),
  ];
}
