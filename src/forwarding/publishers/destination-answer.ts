import type { Readable } from 'node:stream';
import { RESPONSE_BODY_BYTES, type AttemptResponse } from '../outbox/outbox.js';

/**
 * What an attempt keeps of the destination's answer (CONTRACT 6, "The
 * destination's answer is kept"): its headers in the order they came, and
 * the first RESPONSE_BODY_BYTES of its body as text. The rest of the body is
 * never waited for: once that much is read the body is destroyed (the
 * connection with it), so a destination answering a gigabyte costs 4 KiB.
 */

/** The answer's headers as ordered [name, value] pairs, from undici's raw list (or its object, in case). */
export function headerPairs(headers: unknown): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) pairs.push([String(headers[i]), String(headers[i + 1])]);
    return pairs;
  }
  if (typeof headers !== 'object' || headers === null) return pairs;
  for (const [name, value] of Object.entries(headers)) {
    if (Array.isArray(value)) for (const one of value) pairs.push([name, String(one)]);
    else if (value !== undefined) pairs.push([name, String(value)]);
  }
  return pairs;
}

/** The value of the first header of that name (any case), if any. */
export function headerValue(pairs: ReadonlyArray<[string, string]>, name: string): string | undefined {
  const lower = name.toLowerCase();
  return pairs.find(([key]) => key.toLowerCase() === lower)?.[1];
}

/**
 * Reads up to RESPONSE_BODY_BYTES of the body, then destroys it without
 * reading on. A body that fails part way (the attempt's timeout, a reset)
 * keeps what had come, marked truncated. Invalid UTF-8 becomes U+FFFD; a
 * character cut in two at the limit is left out.
 */
export async function readAnswerBody(body: Readable): Promise<{ body: string; bodyTruncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of body) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      if (bytes.length === 0) continue;
      if (size >= RESPONSE_BODY_BYTES) {
        truncated = true;
        break;
      }
      const room = RESPONSE_BODY_BYTES - size;
      chunks.push(bytes.length > room ? bytes.subarray(0, room) : bytes);
      size += Math.min(room, bytes.length);
      if (bytes.length > room) {
        truncated = true;
        break;
      }
    }
  } catch {
    truncated = true;
  } finally {
    // Breaking out of the loop destroys the body already; a body that ended is left as it is.
    if (!body.destroyed && truncated) body.destroy();
  }
  const bytes = Buffer.concat(chunks, size);
  // Streaming mode holds back an incomplete last character instead of replacing it: right for a body that was cut.
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes, { stream: truncated });
  return { body: text, bodyTruncated: truncated };
}

/** The answer kept with an attempt. */
export async function keptAnswer(headers: unknown, body: Readable): Promise<AttemptResponse> {
  const pairs = headerPairs(headers);
  return { headers: pairs, ...(await readAnswerBody(body)) };
}
