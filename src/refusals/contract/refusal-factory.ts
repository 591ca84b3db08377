import { randomUUID } from 'node:crypto';
import type { NewRefusal } from '../refusals.js';
import { BASE_TIME } from '../../../test/helpers/delivery-factory.js';

let clock = 0;

/** A refusal as the receiver would hand it over: a 415 to `github`, received one second after the one before. */
export function newRefusal(overrides: Partial<NewRefusal> = {}): NewRefusal {
  clock += 1;
  return {
    id: randomUUID(),
    source: 'github',
    receivedAt: BASE_TIME + clock * 1000,
    method: 'POST',
    status: 415,
    code: 'unsupported_media_type',
    detail: 'Send application/json, application/*+json or application/x-www-form-urlencoded.',
    contentType: 'text/plain',
    size: 5,
    headers: [
      ['Host', '127.0.0.1'],
      ['Content-Type', 'text/plain'],
    ],
    preview: Buffer.from(`n=${clock}`),
    ...overrides,
  };
}

export function newRefusals(count: number, overrides: Partial<NewRefusal> = {}): NewRefusal[] {
  return Array.from({ length: count }, () => newRefusal(overrides));
}
