import { ProblemError } from '../platform/errors/problem-catalogue.js';
import type { BodyKind } from './media-type.js';
import { checkFormFields, parseFormBody } from './parse-form.js';
import { checkJsonBody, jsonBodyValue } from './parse-json.js';
import { parseMultipart } from './parse-multipart.js';
import { decodeText, textBodyJson } from './parse-text.js';

/** A body read and checked as its kind (CONTRACT 1 and 9). */
export interface ReceivedBody {
  kind: BodyKind | 'any';
  raw: Buffer;
  /**
   * The body as JSON text, kept beside the raw bytes where they alone do not
   * give it back: a multipart body's fields and files (parsing them again at
   * every read would cost as much as receiving), `null` for a body taken by
   * `any` (its type may be one that another kind parses). Null for the other
   * kinds, which are read off the raw bytes by their Content-Type.
   */
  stored: string | null;
  /** The body's value, for route filters, event types and handshakes; parsed when first asked for. */
  value(): unknown;
}

/** What a source decides about its bodies. */
export interface BodyRules {
  /** Any JSON value at the top level, not only an object. */
  anyJson: boolean;
}

/**
 * Checks and parses a body as `kind`: throws the problem a sender is told
 * (`invalid_json`, `json_not_object`, `invalid_form`, `invalid_multipart`,
 * `payload_too_large` for too many form fields or multipart parts). Text,
 * XML and `any` take any bytes. Only a multipart body is parsed
 * asynchronously (its promise rejects with the problem); the others are
 * answered, or thrown, at once, so that a JSON body costs its receiver no
 * promise.
 */
export function parseReceivedBody(
  kind: BodyKind | 'any',
  raw: Buffer,
  contentType: string,
  rules: BodyRules,
): ReceivedBody | Promise<ReceivedBody> {
  switch (kind) {
    case 'json':
      checkJsonBody(raw, rules.anyJson);
      return received(kind, raw, null, () => jsonBodyValue(raw));
    case 'form': {
      checkFormFields(raw);
      const form = parseFormBody(raw);
      return received(kind, raw, null, () => form);
    }
    case 'multipart': {
      return parseMultipart(raw, contentType).then((multipart) =>
        received(kind, raw, JSON.stringify(multipart), () => multipart),
      );
    }
    case 'text':
      return received(kind, raw, null, () => {
        const json = textBodyJson(raw);
        return json === undefined ? decodeText(raw, contentType) : (JSON.parse(json) as unknown);
      });
    case 'xml':
      return received(kind, raw, null, () => decodeText(raw, contentType));
    case 'any':
      return received(kind, raw, 'null', () => null);
    default:
      throw new ProblemError('unsupported_media_type', 'This body kind is not known.');
  }
}

function received(kind: BodyKind | 'any', raw: Buffer, stored: string | null, parse: () => unknown): ReceivedBody {
  let value: { parsed: unknown } | undefined;
  return {
    kind,
    raw,
    stored,
    value: () => {
      value ??= { parsed: parse() };
      return value.parsed;
    },
  };
}
