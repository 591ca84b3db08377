/**
 * What a webhook request's headers say of its body: its declared length,
 * its content coding, and the refusals of a media type or coding that is
 * not taken here (given before the body is read when one is announced).
 */
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import { classifyMediaType, KIND_MEDIA_TYPES, mediaTypeEssence, type AcceptKind } from './media-type.js';

/** The refusal of a compressed body. */
export function compressed(coding: string): ProblemError {
  return new ProblemError(
    'unsupported_media_type',
    `Content-Encoding "${coding}" is not accepted here: send the body uncompressed.`,
  );
}

/**
 * The refusal of a media type that the source does not take (CONTRACT 9),
 * or of several that disagree. The detail says which `accept` kind would
 * take it: its own kind, or `any` for a type no kind parses (or none).
 */
export function unsupported(contentType: string | undefined, conflicting: boolean, accept: readonly AcceptKind[]): ProblemError {
  if (conflicting) {
    return new ProblemError('unsupported_media_type', 'The request has several Content-Type headers that disagree; send one.');
  }
  const kind = classifyMediaType(contentType) ?? 'any';
  const essence = mediaTypeEssence(contentType);
  const what =
    essence === undefined
      ? 'The request has no Content-Type'
      : essence === ''
        ? 'The request has an empty Content-Type'
        : `This source does not take ${essence.length > 100 ? `${essence.slice(0, 100)}…` : essence}`;
  const takes = accept.flatMap((k) => (k === 'any' ? [] : [KIND_MEDIA_TYPES[k]])).join(', ');
  return new ProblemError(
    'unsupported_media_type',
    `${what}; it takes ${takes}. To take it, add "${kind}" to the source's accept list in the config file.`,
  );
}

/**
 * A content coding other than `identity` (gzip, br...), as RFC 9110 8.4.1
 * allows a server to refuse with 415: the body would be stored compressed
 * and parsed as garbage. Cut to 40 characters for the answer.
 */
export function contentCoding(header: string | undefined): string | undefined {
  const coding = header?.trim().toLowerCase();
  return coding === undefined || coding === '' || coding === 'identity' ? undefined : coding.slice(0, 40);
}

/** The declared body size; one past 2^53 (or too long to read as a number at all) is larger than any limit, not unknown. */
export function parseContentLength(header: string | undefined): number | undefined {
  const digits = header?.trim();
  return digits !== undefined && /^\d+$/.test(digits) ? Number(digits) : undefined;
}
