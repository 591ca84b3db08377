import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { startAppOn, type RunningApp } from '../helpers/app.js';
import { holdCommits } from '../helpers/held-commits.js';
import { tempDir } from '../helpers/temp-dir.js';

/**
 * A sender that writes its whole request and then closes its side of the
 * connection (a TCP half-close, as `nc -N` or a raw-socket client does)
 * still reads the answer: a delivery that is stored is answered, however
 * long the commit takes. Node's default would end the connection at the
 * sender's FIN, so the delivery was kept and its 200 never sent.
 */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function sendAndHalfClose(app: RunningApp, request: string): Promise<string> {
  const { port } = new URL(app.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.end(request);
  });
}

describe('a sender that half-closes after its request', () => {
  it('is answered 200 with the receipt once the commit is done, and the delivery is kept', async () => {
    const dir = tempDir();
    const real = new SqliteStore({ file: join(dir.path, 'held.sqlite'), durability: 'full' });
    const { store, release } = holdCommits(real);
    const app = await startAppOn(store);
    cleanups.push(async () => {
      release();
      await app.close();
      dir.remove();
    });
    const answer = sendAndHalfClose(
      app,
      'POST /api/webhook/half HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}',
    );
    // The FIN arrives long before the commit is let go.
    await new Promise((resolve) => setTimeout(resolve, 300));
    release();
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    const receipt = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { id: string };
    const stored = await fetch(`${app.url}/api/deliveries/${receipt.id}`, { headers: app.auth });
    expect(stored.status).toBe(200);
  });
});
