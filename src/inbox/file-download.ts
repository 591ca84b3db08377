/**
 * The headers of a file download from a multipart delivery: the part's
 * media type and file name came from the sender, and the answer comes from
 * the web page's origin, so neither is passed on as it is.
 */

/**
 * Media types that a browser shows as what they are and never runs: a
 * part's own type is sent only when it is one of these (SVG, HTML, XML and
 * script types run in a page), else `application/octet-stream`.
 */
const PASSIVE_TYPES: ReadonlySet<string> = new Set([
  'application/octet-stream',
  'application/pdf',
  'application/zip',
  'application/gzip',
  'application/json',
  'text/plain',
  'text/csv',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'audio/mpeg',
  'audio/ogg',
  'audio/wav',
  'video/mp4',
  'video/webm',
]);

/** The Content-Type to send a file with: its part's type when that is passive, else `application/octet-stream`. */
export function downloadContentType(partType: string): string {
  const essence = partType.split(';')[0]?.trim().toLowerCase() ?? '';
  return PASSIVE_TYPES.has(essence) ? essence : 'application/octet-stream';
}

/**
 * Characters no file name should carry: controls, format characters (the
 * bidirectional overrides that make `invoice‮fdp.exe` read as
 * `invoiceexe.pdf`, zero-width ones), line and paragraph separators, and
 * the path separators and quotes that a name on a disk or in a header may
 * not hold.
 */
const UNSAFE_IN_NAME = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\\/"]/gu;

/**
 * `Content-Disposition: attachment` with the sender's file name made safe:
 * an ASCII `filename` (other characters as `_`) for old clients, and the
 * name in UTF-8 as `filename*` (RFC 6266, RFC 8187). A name that is empty,
 * or only dots once cleaned, becomes `fallback`.
 */
export function attachmentDisposition(filename: string | null, fallback: string): string {
  let name = [...(filename ?? '').replace(UNSAFE_IN_NAME, '_')].slice(0, 200).join('').trim();
  if (/^[._\s]*$/.test(name)) name = fallback;
  name = name.replace(/^\.+/, '_');
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/[%;\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
