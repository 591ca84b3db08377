import { describe, expect, it } from 'vitest';
import { attachmentDisposition, downloadContentType } from '../../../src/inbox/file-download.js';

describe('downloadContentType', () => {
  it("keeps a part's type that browsers never run, and sends every other as octet-stream", () => {
    expect(downloadContentType('image/png')).toBe('image/png');
    expect(downloadContentType('Application/PDF; x=1')).toBe('application/pdf');
    for (const active of ['text/html', 'image/svg+xml', 'application/xml', 'text/javascript', 'application/xhtml+xml', '', 'x']) {
      expect(downloadContentType(active), active).toBe('application/octet-stream');
    }
  });
});

describe('attachmentDisposition', () => {
  it('gives an ASCII name and the UTF-8 one (RFC 8187)', () => {
    expect(attachmentDisposition('report.pdf', 'f')).toBe(`attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`);
    expect(attachmentDisposition('Überweisung (1).pdf', 'f')).toBe(
      `attachment; filename="_berweisung (1).pdf"; filename*=UTF-8''%C3%9Cberweisung%20%281%29.pdf`,
    );
  });

  it('cleans what a hostile name carries: quotes, separators, controls, bidirectional overrides, leading dots', () => {
    expect(attachmentDisposition('a"b\\c/d;e%f.txt', 'f')).toBe(
      `attachment; filename="a_b_c_d_e_f.txt"; filename*=UTF-8''a_b_c_d%3Be%25f.txt`,
    );
    expect(attachmentDisposition('invoice\u202efdp.exe', 'f')).toContain('filename="invoice_fdp.exe"');
    expect(attachmentDisposition('a\r\nSet-Cookie: x=1', 'f')).toBe(
      `attachment; filename="a__Set-Cookie: x=1"; filename*=UTF-8''a__Set-Cookie%3A%20x%3D1`,
    );
    expect(attachmentDisposition('.bashrc', 'f')).toContain('filename="_bashrc"');
    expect(attachmentDisposition('zero\u200bwidth', 'f')).toContain('filename="zero_width"');
  });

  it('falls back to a name of its own for none, or one of dots only', () => {
    for (const name of [null, '', '..', ' . ', '\u202e']) {
      expect(attachmentDisposition(name, 'id-file-0'), String(name)).toBe(
        `attachment; filename="id-file-0"; filename*=UTF-8''id-file-0`,
      );
    }
    expect(attachmentDisposition('x'.repeat(500), 'f').length).toBeLessThan(500);
  });
});
