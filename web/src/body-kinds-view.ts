// The bodies that are not JSON or form data (CONTRACT 9): a multipart
// body's fields and its files (each one a download), text as text, XML as
// indented text. Every name and value goes in as a text node.

import { fileUrl } from './api.ts';
import { h } from './dom.ts';
import { formatSize } from './format.ts';
import { indentXml } from './xml-indent.ts';

export interface MultipartFile {
  field: string;
  filename: string | null;
  contentType: string;
  size: number;
}

/** The body a multipart delivery shows: `{ fields, files }`. */
export interface MultipartBody {
  fields: Record<string, unknown>;
  files: MultipartFile[];
}

/** True for a multipart body of the shape the server gives; anything else is shown as JSON. */
export function isMultipartBody(body: unknown): body is MultipartBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const { fields, files } = body as { fields?: unknown; files?: unknown };
  return (
    typeof fields === 'object' &&
    fields !== null &&
    Array.isArray(files) &&
    files.every((file) => typeof file === 'object' && file !== null && typeof (file as MultipartFile).size === 'number')
  );
}

/** The files of a multipart delivery: name, field, type and size, and a download link for each. */
export function filesList(deliveryId: string, files: readonly MultipartFile[]): HTMLElement {
  if (files.length === 0) return h('p', { class: 'muted files-none' }, 'No files.');
  return h(
    'ul',
    { class: 'files-list', attrs: { 'aria-label': 'Files' } },
    ...files.map((file, index) =>
      h(
        'li',
        { class: 'file-item', attrs: { 'data-index': String(index) } },
        h('span', { class: 'file-name' }, file.filename ?? '(no file name)'),
        h(
          'span',
          { class: 'file-meta muted' },
          `${file.field} · ${file.contentType} · ${formatSize(file.size)} (${file.size.toLocaleString()} bytes)`,
        ),
        h(
          'a',
          {
            class: 'button',
            // `download` with no name: the server's Content-Disposition names the file (cleaned of what a name must not hold).
            attrs: { href: fileUrl(deliveryId, index), download: '', 'data-action': 'download-file' },
          },
          'Download',
        ),
      ),
    ),
  );
}

/** A text body as it reads (body-part.ts cuts a large one first). */
export function textView(text: string, className = 'text-body'): HTMLElement {
  return h('pre', { class: `raw-body ${className}` }, text);
}

/** An XML body as indented text (never parsed as a document: see xml-indent.ts). */
export function xmlView(text: string): HTMLElement {
  return textView(indentXml(text), 'xml-body');
}
