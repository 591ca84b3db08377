import { execFile, execFileSync } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RunningApp } from '../helpers/app.js';
import { resendCommand } from '../../web/src/curl-command.js';
import { skipBrowserTests, useBrowserAndServer } from './support/browser.js';
import { openPage, row, sendWebhook } from './support/page.js';

const hasCurl = ((): boolean => {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Runs a command line in bash without blocking this process (the target server lives here too). */
function bash(command: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', command], { timeout: 10_000 }, (error, _stdout, stderr) => {
      if (error === null) resolve();
      else reject(new Error(`${error.message}\n${stderr}`));
    });
  });
}

async function rawOf(server: RunningApp, id: string): Promise<{ bytes: Buffer; type: string | null }> {
  const response = await fetch(`${server.url}/api/deliveries/${id}/raw`, { headers: server.auth });
  return { bytes: Buffer.from(await response.arrayBuffer()), type: response.headers.get('content-type') };
}

describe.skipIf(!hasCurl)('"Copy as curl" sends the delivery again, byte for byte', () => {
  it('through base64 when the body is not UTF-8 text (run against a bare HTTP server)', async () => {
    const body = Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0x27, 0x0a, 0x40, 0x7d]);
    const got: Array<{ url: string; headers: IncomingHttpHeaders; body: Buffer }> = [];
    const target = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        got.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
      const command = resendCommand(origin, {
        id: 'x', seq: 1, source: "it's odd", receivedAt: '', method: 'POST', query: 'a=1&b=%20&glob={1,2}&range=[x]',
        contentType: 'application/octet-stream', size: body.length, remoteAddress: '', body: null,
        verification: { status: 'failed', scheme: 'hmac' },
        headers: [['Host', 'old'], ['Content-Length', '8'], ['X-Signature', "sha256='quoted'"], ['X-Empty', ''], ['Authorization', '[redacted]']],
      }, new Uint8Array(body));
      await bash(command);
      expect(got).toHaveLength(1);
      // Sent once, as stored: no curl globbing of {1,2} or [x].
      expect(got[0]?.url).toBe("/api/webhook/it's%20odd?a=1&b=%20&glob={1,2}&range=[x]");
      expect(got[0]?.headers['x-empty']).toBe('');
      expect(got[0]?.body.equals(body)).toBe(true);
      expect(got[0]?.headers['content-type']).toBe('application/octet-stream');
      expect(got[0]?.headers['x-signature']).toBe("sha256='quoted'");
      expect(got[0]?.headers.authorization).toBeUndefined();
    } finally {
      await new Promise<void>((resolve) => target.close(() => resolve()));
    }
  });

  describe.skipIf(skipBrowserTests)('from the page in Chromium', () => {
    let browser: Browser;
    let server: RunningApp;
    useBrowserAndServer((b, s) => {
      browser = b;
      server = s;
    });

    it('copies a command that, run in bash, stores the same bytes with the same content type', async () => {
      // Quotes, a leading "@" value, newlines, trailing spaces, non-ASCII: all must survive the shell.
      const raw = `{"quote": "it's \\"fine\\"",\n  "at": "@/etc/passwd", "dollar": "$HOME \`id\`",\n  "text": "héllo ✓ 🙂"}  \n`;
      const sent = await sendWebhook(server, 'resend me', raw, {
        'content-type': 'application/vnd.api+json; charset=UTF-8',
        'x-hub-signature-256': 'sha256=abc',
        authorization: 'Bearer secret',
      });
      const session = await openPage(browser, server, { clipboard: true });
      const { page } = session;
      await row(page, sent.id).locator('a').click();
      await page.locator('[data-action="copy-curl"]').click();
      const shown = page.locator('.curl-command');
      await shown.waitFor();
      const command = (await shown.textContent()) ?? '';
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(command);
      expect(command).toContain(`'${server.url}/api/webhook/resend%20me'`);
      expect(command).not.toContain('secret');

      await bash(command);
      const list = await fetch(`${server.url}/api/deliveries?source=${encodeURIComponent('resend me')}`, { headers: server.auth });
      const { items } = (await list.json()) as { items: Array<{ id: string; headers: Array<[string, string]> }> };
      expect(items).toHaveLength(2);
      const again = items[0];
      if (again === undefined || again.id === sent.id) throw new Error('the command did not store a new delivery');
      const [before, after] = await Promise.all([rawOf(server, sent.id), rawOf(server, again.id)]);
      expect(after.bytes.equals(before.bytes)).toBe(true);
      expect(after.bytes.toString('utf8')).toBe(raw);
      expect(after.type).toBe('application/vnd.api+json; charset=UTF-8');
      expect(again.headers).toContainEqual(['x-hub-signature-256', 'sha256=abc']);
      await session.close();
    });
  });
});
