import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';

interface Conversation {
  text: string;
  /** Undefined when the server had not closed the connection after `ms`. */
  closedAfterMs: number | undefined;
}

/** Writes raw bytes on one connection and collects everything until the server closes it or `ms` pass. */
function converse(server: RunningApp, talk: (socket: Socket, received: () => string) => void, ms: number): Promise<Conversation> {
  const { port } = new URL(server.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    const started = Date.now();
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', () => undefined);
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closedAfterMs: undefined });
    }, ms);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closedAfterMs: Date.now() - started });
    });
    socket.on('connect', () => talk(socket, () => text));
  });
}

const head = (length: number, type = 'application/json'): string =>
  `POST /api/webhook/linger HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`;
const statuses = (text: string): string[] => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1] ?? '');

describe('a request refused before its body was read', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp({ maxBodyBytes: 1024 });
  });
  afterAll(async () => {
    await server.close();
  });

  it('is answered, its short body is thrown away, and the connection serves the next request', async () => {
    const over = `{"pad":"${'x'.repeat(2000)}"}`;
    const ok = '{"n":1}';
    const requests = [head(over.length) + over, head(ok.length, 'text/plain') + ok, head(ok.length) + ok];
    const { text } = await converse(
      server,
      (socket, received) => {
        // One request at a time on the same connection, each once the previous answer is in.
        let sent = 0;
        const sendNext = (): void => {
          if (statuses(received()).length < sent) return;
          const request = requests[sent];
          if (request === undefined) return;
          sent++;
          socket.write(request);
        };
        socket.on('data', () => setImmediate(sendNext));
        sendNext();
      },
      2500,
    );
    expect(statuses(text)).toEqual(['413', '415', '200']);
    const list = await fetch(`${server.url}/api/deliveries?source=linger`, { headers: server.auth });
    expect(((await list.json()) as { items: unknown[] }).items.length).toBe(1);
  });

  it('cuts a sender that keeps sending after the answer', async () => {
    const { text, closedAfterMs } = await converse(
      server,
      (socket) => {
        socket.write(head(64 * 1024 * 1024));
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        const pump = (): void => {
          while (!socket.destroyed && socket.write(chunk));
          if (!socket.destroyed) socket.once('drain', pump);
        };
        pump();
      },
      8000,
    );
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(closedAfterMs).toBeDefined();
    expect(closedAfterMs ?? Infinity).toBeLessThan(6000);
  });

  it('lets a sender that reads late still find the answer after the cut (no reset on unread bytes)', async () => {
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    // Send far more than the server discards, reading nothing until the server has cut.
    socket.pause();
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(head(64 * 1024 * 1024));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    for (let i = 0; i < 16 * 16; i++) socket.write(chunk);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => {
      text += data;
    });
    socket.resume();
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.destroy();
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('cuts a sender that stops sending after the answer, within the linger time', async () => {
    const { text, closedAfterMs } = await converse(
      server,
      (socket) => {
        socket.write(`${head(5000)}{"partial":`);
      },
      8000,
    );
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(closedAfterMs ?? Infinity).toBeGreaterThanOrEqual(1900);
    expect(closedAfterMs ?? Infinity).toBeLessThan(5000);
  });
});
