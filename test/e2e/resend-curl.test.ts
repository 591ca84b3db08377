import { execFile, execFileSync } from 'node:child_process';

import { existsSync, writeFileSync } from 'node:fs';

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import type { Browser } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';

import type { RunningApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';

import { tempDir } from '../helpers/temp-dir.js';

import { LONGEST_ARGUMENT, resendCommand } from '../../web/src/curl-command.js';

import type { Delivery } from '../../web/src/delivery.js';
import { skipBrowserTests, useBrowserAndServer } from '../helpers/browser.js';

import { hasScript, InteractiveBash } from '../helpers/interactive-bash.js';

import { openPage, row, sendWebhook } from '../helpers/page.js';

const hasCurl = ((): boolean => {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * Runs a command line in bash without blocking this process (the target
 * server lives here too). The command goes in a file: as an argument of
 * `bash -c`, a long one would be refused (E2BIG) before bash ever ran.
 */
function bash(command: string): Promise<void> {
  const dir = tempDir();
  const file = join(dir.path, 'command.sh');
  writeFileSync(file, command);
  return new Promise<void>((resolve, reject) => {
    execFile('bash', ['--norc', '--noprofile', file], { timeout: 10_000 }, (error, _stdout, stderr) => {
      if (error === null) resolve();
      else reject(new Error(`${error.message}\n${stderr}`));
    });
  }).finally(dir.remove);
}

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A bare HTTP server on loopback that keeps every request it gets. */
async function recordingServer(): Promise<{ origin: string; got: Received[]; close: () => Promise<void> }> {
  const got: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      got.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    got,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function delivery(overrides: Partial<Delivery>): Delivery {
  return {
    id: 'x',
    seq: 1,
    source: 'src',
    eventType: null,
    receivedAt: '',
    method: 'POST',
    query: '',
    contentType: 'application/x-www-form-urlencoded',
    size: 0,
    remoteAddress: '',
    body: null,
    verification: { status: 'none' },
    headers: [],
    forwards: [],
    ...overrides,
  };
}

/** The command with its ` \` line continuations joined: then no control or invisible character may be left in it. */
function expectPasteSafe(command: string): void {
  expect(command.replaceAll(' \\\n  ', ' ')).not.toMatch(/[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}]/u);
}

const C0 = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join('');
const C1 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)).join('');
/** The body of the security review: pasted with bracketed paste, it ran `touch` without Enter. */
const attack = (marker: string): string => `a=x\x1b[201~\x15touch ${marker}\r&b=1`;

async function rawOf(server: RunningApp, id: string): Promise<{ bytes: Buffer; type: string | null }> {
  const response = await fetch(`${server.url}/api/deliveries/${id}/raw`, { headers: server.auth });
  return { bytes: Buffer.from(await response.arrayBuffer()), type: response.headers.get('content-type') };
}

describe.skipIf(!hasCurl)('"Copy as curl" sends the delivery again, byte for byte', () => {
  const closers: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function target(): Promise<Awaited<ReturnType<typeof recordingServer>>> {
    const server = await recordingServer();
    closers.push(server.close);
    return server;
  }

  it('through base64 when the body is not UTF-8 text (run against a bare HTTP server)', async () => {
    const body = Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0x27, 0x0a, 0x40, 0x7d]);
    const { origin, got } = await target();
    const command = resendCommand(
      origin,
      delivery({
        source: "it's odd",
        query: 'a=1&b=%20&glob={1,2}&range=[x]',
        contentType: 'application/octet-stream',
        verification: { status: 'failed', scheme: 'hmac' },
        headers: [
          ['Host', 'old'],
          ['Content-Length', '8'],
          ['X-Signature', "sha256='quoted'"],
          ['X-Empty', ''],
          ['Authorization', '[redacted]'],
        ],
      }),
      new Uint8Array(body),
    );
    await bash(command);
    expect(got).toHaveLength(1);
    // Sent once, as stored: no curl globbing of {1,2} or [x].
    expect(got[0]?.url).toBe("/api/webhook/it's%20odd?a=1&b=%20&glob={1,2}&range=[x]");
    expect(got[0]?.headers['x-empty']).toBe('');
    expect(got[0]?.body.equals(body)).toBe(true);
    expect(got[0]?.headers['content-type']).toBe('application/octet-stream');
    expect(got[0]?.headers['x-signature']).toBe("sha256='quoted'");
    expect(got[0]?.headers.authorization).toBeUndefined();
  });

  it('with every C0 and C1 control, DEL and invisible characters in the body and headers: no raw control in the command, the same bytes sent', async () => {
    const { origin, got } = await target();
    const bodies = [
      attack('/tmp/never'),
      `${C0}|${C1}|\x7f|\u200b\u202e\u2066\ufeff\u3164\u115f\u{e0041}|'\\!$(id)`,
      `{"a": "x"}\x1b[201~\x00`, // NUL: through base64
    ];
    // Node's parser takes a tab and bytes from 0x80 in a header value (other controls are refused before any route).
    const headers: Array<[string, string]> = [
      ['X-Tab', 'a\tb'],
      ['X-C1', C1],
      ['X-Invisible', 'sig\u200b\u202e'],
    ];
    for (const text of bodies) {
      const command = resendCommand(origin, delivery({ headers }), new TextEncoder().encode(text));
      expectPasteSafe(command);
      await bash(command);
      const received = got[got.length - 1];
      expect(received?.body.equals(Buffer.from(text, 'utf8'))).toBe(true);
      // Header values are text to the page: curl sends each as the UTF-8 of what the page shows.
      for (const [name, value] of headers) {
        expect(received?.headers[name.toLowerCase()]).toBe(Buffer.from(value, 'utf8').toString('latin1'));
      }
    }
    expect(got).toHaveLength(bodies.length);
  });

  it('a text body longer than one argument may be goes through a pipe and arrives whole', async () => {
    const { origin, got } = await target();
    // Printable, and with a control character: both are quoted longer than Linux takes for one argument (128 KiB).
    const texts = [
      `{"long": "${'x\u00e9'.repeat(LONGEST_ARGUMENT)}"}`,
      `{"long": "${'x\u00e9\u0007'.repeat(LONGEST_ARGUMENT / 2)}"}`,
    ];
    for (const [index, text] of texts.entries()) {
      const command = resendCommand(origin, delivery({ contentType: 'application/json' }), new TextEncoder().encode(text));
      expectPasteSafe(command);
      await bash(command);
      expect(got[index]?.body.equals(Buffer.from(text, 'utf8'))).toBe(true);
    }
  });

  describe.skipIf(!hasScript)('pasted into an interactive bash with bracketed paste', () => {
    it('runs nothing of a hostile body before Enter, and Enter sends exactly the stored bytes', async () => {
      const home = tempDir();
      closers.push(home.remove);
      const marker = join(home.path, 'pwned');
      const { origin, got } = await target();
      const shell = await InteractiveBash.start(home.path);
      closers.push(() => shell.close());
      expect(shell.bracketedPaste).toBe(true);

      // The harness can tell: the body quoted as it was, pasted, runs `touch` with no Enter pressed.
      shell.paste(`curl --data-raw '${attack(marker)}' ${origin}/before-the-fix`);
      await eventually(() => existsSync(marker), 5000);
      expect(got).toEqual([]);
      // What is left of that line is an unclosed quote.
      await shell.interrupt();

      const unsafeMarker = join(home.path, 'pwned-again');
      const body = attack(unsafeMarker);
      const command = resendCommand(origin, delivery({ headers: [['X-C1', `a${C1}\tb`]] }), new TextEncoder().encode(body));
      shell.paste(command);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(existsSync(unsafeMarker)).toBe(false);
      expect(got).toEqual([]);
      shell.type('\r');
      await eventually(() => got.length === 1, 10_000);
      expect(got[0]?.body.equals(Buffer.from(body, 'utf8'))).toBe(true);
      expect(got[0]?.headers['x-c1']).toBe(Buffer.from(`a${C1}\tb`, 'utf8').toString('latin1'));
      expect(existsSync(unsafeMarker)).toBe(false);
    });
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
      const list = await fetch(`${server.url}/api/deliveries?source=${encodeURIComponent('resend me')}`, {
        headers: server.auth,
      });
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

    it('copies a command without one raw control character for the form body of the security review, which run stores the same bytes', async () => {
      const home = tempDir();
      closers.push(home.remove);
      const marker = join(home.path, 'pwned');
      const raw = `${attack(marker)}&c=${encodeURIComponent('\u200b')}\u0085\u009b`;
      const sent = await sendWebhook(server, 'pasted', raw, {
        'content-type': 'application/x-www-form-urlencoded',
        'x-tab': 'a\tb',
      });
      const session = await openPage(browser, server, { clipboard: true });
      const { page } = session;
      await row(page, sent.id).locator('a').click();
      await page.locator('[data-action="copy-curl"]').click();
      await page.locator('.curl-command').waitFor();
      const command = (await page.evaluate('navigator.clipboard.readText()')) as string;
      expect(await page.locator('.curl-command').textContent()).toBe(command);
      expectPasteSafe(command);
      expect(command).toContain("--data-raw $'a=x\\x1b[201~\\x15touch ");

      await bash(command);
      expect(existsSync(marker)).toBe(false);
      const list = await fetch(`${server.url}/api/deliveries?source=pasted`, { headers: server.auth });
      const { items } = (await list.json()) as { items: Array<{ id: string; headers: Array<[string, string]> }> };
      const again = items[0];
      if (items.length !== 2 || again === undefined) throw new Error('the command did not store a new delivery');
      expect((await rawOf(server, again.id)).bytes.equals(Buffer.from(raw, 'utf8'))).toBe(true);
      expect(again.headers).toContainEqual(['x-tab', 'a\tb']);
      await session.close();
    });
  });
});
