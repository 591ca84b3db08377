import { isUtf8 } from 'node:buffer';
import { mediaTypeParameter } from './media-type.js';
import { jsonBodyText, MAX_JSON_DEPTH } from './parse-json.js';
import { scanJson } from './json-scan.js';

/**
 * A text or XML body as text (CONTRACT 9): decoded as its `charset`
 * parameter says (UTF-8 when it names none, or one this runtime does not
 * know), a byte order mark dropped, bytes that do not decode replaced by
 * U+FFFD. The raw bytes stay as they came; this is only what is shown.
 */
export function decodeText(raw: Buffer, contentType: string): string {
  const charset = mediaTypeParameter(contentType, 'charset');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    try {
      return new TextDecoder(charset).decode(raw);
    } catch {
      // A label TextDecoder does not know: UTF-8, as for none.
    }
  }
  return new TextDecoder('utf-8').decode(raw);
}

/**
 * The JSON text of a `text/plain` body that is one JSON object, as AWS SNS
 * sends its notifications (`jsonBodyText`: the sender's own text, placed as
 * it is); undefined for any other text.
 */
export function textBodyJson(raw: Buffer): string | undefined {
  if (!isUtf8(raw)) return undefined;
  const scan = scanJson(raw, MAX_JSON_DEPTH);
  return scan.ok && scan.kind === 'object' ? jsonBodyText(raw) : undefined;
}
