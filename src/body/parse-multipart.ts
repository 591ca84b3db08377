import { Busboy, type BusboyFileStream } from '@fastify/busboy';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import type { FormBody } from './parse-form.js';

/** One file of a multipart body, as the delivery shows it; its bytes stay in the raw body. */
export interface MultipartFile {
  field: string;
  /** The file name the sender gave, without any directory part; null when it gave none. */
  filename: string | null;
  /** The part's media type in lower case (`application/octet-stream` when it named none). */
  contentType: string;
  size: number;
}

/** A `multipart/form-data` body as a delivery keeps it (CONTRACT 9). */
export interface MultipartBody {
  fields: FormBody;
  files: MultipartFile[];
}

/**
 * What a multipart body may hold to be received. Senders post tens of parts
 * (SendGrid's inbound parse: about 15 fields and the attachments; Mailgun's
 * routes: about 20). The body as a whole is bounded by the source's
 * `maxBodyBytes`; these bound the work and what is kept beside the raw bytes.
 */
export const MULTIPART_LIMITS = {
  /** Parts (fields and files together). */
  parts: 1000,
  /** File parts: a part with a file name, or of type application/octet-stream. */
  files: 100,
  /** Bytes of one field's value (files have no limit but the body's own). */
  fieldBytes: 1024 * 1024,
  /** Bytes of one part's header block; a longer one is cut (busboy's own rule). */
  headerBytes: 16 * 1024,
} as const;

/** Time busboy gets to finish once it has every byte, in ms. */
const STALL_MS = 2000;

/** Bytes fed to the parser at a time; between them other requests get the event loop. */
const CHUNK_BYTES = 64 * 1024;

/** What `walkMultipart` reports of each part, in order. */
interface Visitor {
  field(name: string, value: string): void;
  /** The file's stream must be consumed; `index` counts files from 0. */
  file(index: number, file: MultipartFile, stream: BusboyFileStream): void;
}

/**
 * Parses a `multipart/form-data` body (CONTRACT 9) with `@fastify/busboy`:
 * its fields (a repeated name becomes an array of its values in order) and
 * the name, type and size of each file. Throws `invalid_multipart` for a
 * body that is not one (no boundary, no closing boundary) and
 * `payload_too_large` past MULTIPART_LIMITS. The result has no prototype, so
 * a `__proto__` field is just a field.
 */
export async function parseMultipart(raw: Buffer, contentType: string): Promise<MultipartBody> {
  const fields: FormBody = Object.create(null) as FormBody;
  const files: MultipartFile[] = [];
  await walkMultipart(raw, contentType, {
    field(name, value) {
      const existing = fields[name];
      if (existing === undefined) fields[name] = value;
      else if (typeof existing === 'string') fields[name] = [existing, value];
      else existing.push(value);
    },
    file(_index, file, stream) {
      files.push(file);
      stream.on('end', () => {
        file.size = stream.bytesRead;
      });
      stream.resume();
    },
  });
  return { fields, files };
}

/**
 * The bytes of one file of a stored multipart body (`index` from 0, in the
 * order of `parseMultipart`'s files), with what the body says of it;
 * undefined when the body has no such file or no longer parses.
 */
export async function multipartFile(
  raw: Buffer,
  contentType: string,
  index: number,
): Promise<{ file: MultipartFile; bytes: Buffer } | undefined> {
  let found: { file: MultipartFile; bytes: Buffer } | undefined;
  try {
    await walkMultipart(raw, contentType, {
      field() {},
      file(at, file, stream) {
        if (at !== index) {
          stream.resume();
          return;
        }
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const bytes = Buffer.concat(chunks);
          found = { file: { ...file, size: bytes.length }, bytes };
        });
      },
    });
  } catch (error) {
    if (error instanceof ProblemError) return undefined;
    throw error;
  }
  return found;
}

/** Feeds `raw` to busboy a chunk at a time and reports each part to `visitor`; resolves once every part has ended. */
function walkMultipart(raw: Buffer, contentType: string, visitor: Visitor): Promise<void> {
  return new Promise((resolve, reject) => {
    let parser: InstanceType<typeof Busboy>;
    try {
      parser = new Busboy({
        headers: { 'content-type': contentType },
        // Parts are views of `raw`, never copies: buffering a whole part
        // costs nothing, and without it busboy stalls for good on a large
        // part that it skips (one with no form-data Content-Disposition).
        highWaterMark: raw.length + 1,
        fileHwm: raw.length + 1,
        defCharset: 'utf8',
        limits: {
          parts: MULTIPART_LIMITS.parts,
          files: MULTIPART_LIMITS.files,
          fieldSize: MULTIPART_LIMITS.fieldBytes,
          headerSize: MULTIPART_LIMITS.headerBytes,
        },
      });
    } catch {
      reject(new ProblemError('invalid_multipart', 'The Content-Type multipart/form-data needs a boundary parameter.'));
      return;
    }
    let settled = false;
    let watchdog: NodeJS.Timeout | undefined;
    const fail = (error: ProblemError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(watchdog);
      parser.removeAllListeners();
      parser.on('error', () => undefined);
      parser.destroy();
      reject(error);
    };
    let files = 0;
    parser.on('field', (name: string | undefined, value: string, _nameCut: boolean, valueCut: boolean) => {
      if (valueCut) {
        fail(tooLarge(`A field of the multipart body is larger than ${MULTIPART_LIMITS.fieldBytes} bytes.`));
        return;
      }
      visitor.field(name ?? '', value);
    });
    parser.on('file', (name: string | undefined, stream: BusboyFileStream, filename: string | undefined, _coding, mimeType) => {
      stream.on('error', () => undefined);
      visitor.file(
        files++,
        { field: name ?? '', filename: filename ?? null, contentType: mimeType || 'application/octet-stream', size: 0 },
        stream,
      );
    });
    parser.on('partsLimit', () => fail(tooLarge(`The multipart body has more than ${MULTIPART_LIMITS.parts} parts.`)));
    parser.on('filesLimit', () => fail(tooLarge(`The multipart body has more than ${MULTIPART_LIMITS.files} files.`)));
    parser.on('error', (error: unknown) => fail(malformed(error)));
    parser.on('finish', () => {
      if (settled) return;
      settled = true;
      clearTimeout(watchdog);
      resolve();
    });
    void feed(parser, raw, () => settled).then(() => {
      // Every byte is parsed by now; what is left comes within a few ticks. A
      // parser that never finishes (as busboy did on skipped parts) must not
      // hold the request, and its sender, for ever.
      if (settled) return;
      watchdog = setTimeout(
        () => fail(new ProblemError('invalid_multipart', 'The multipart body could not be parsed.')),
        STALL_MS,
      );
    });
  });
}

/** Writes `raw` a chunk at a time, letting other work run between chunks, until it is all written or `stopped()`. */
async function feed(parser: InstanceType<typeof Busboy>, raw: Buffer, stopped: () => boolean): Promise<void> {
  for (let at = 0; at < raw.length; at += CHUNK_BYTES) {
    if (stopped()) return;
    parser.write(raw.subarray(at, at + CHUNK_BYTES));
    if (at + CHUNK_BYTES < raw.length) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  if (!stopped()) parser.end();
}

function tooLarge(detail: string): ProblemError {
  return new ProblemError('payload_too_large', detail);
}

/** Busboy's words for a body that is not multipart, as the answer says them. */
function malformed(error: unknown): ProblemError {
  const message = error instanceof Error ? error.message : '';
  const detail = /unexpected end/i.test(message)
    ? 'The multipart body ends before its closing boundary (or has none of the boundary its Content-Type names).'
    : 'The multipart body is malformed.';
  return new ProblemError('invalid_multipart', detail);
}
