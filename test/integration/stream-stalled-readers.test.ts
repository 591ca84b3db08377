import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startApp, type RunningApp } from '../helpers/app.js';

import { connectSse, type SseClient } from '../helpers/sse.js';

import { eventually } from '../helpers/eventually.js';

const READERS = 30;
const EVENT_BYTES = 4 * 1024 * 1024;

/**
 * Readers that stop reading keep what they were sent queued on their
 * sockets. Each gets the same rendered Buffer, so 30 of them that have not
 * taken a 4 MiB event hold about one copy of it, not 30 (126 MB: written as
 * a string, each socket kept its own; 100 readers of 5 MiB events held
 * 470 MB). The app runs in this process, so its memory is this process's.
 */
describe('stalled stream readers', () => {
  let server: RunningApp;
  const sockets: Socket[] = [];
  const readers: SseClient[] = [];
  beforeAll(async () => {
    // Generous bounds, so that no reader is dropped while the memory is measured.
    server = await startApp({ streamMaxBufferedBytes: 64 * 1024 * 1024, streamHeartbeatMs: 60_000 });
    server.app.server.on('connection', (socket: Socket) => sockets.push(socket));
  });
  afterAll(async () => {
    for (const reader of readers) reader.close();
    await server.close();
  });

  it(`share one copy of a pending ${EVENT_BYTES / 1024 / 1024} MiB event among ${READERS} readers`, async () => {
    for (let i = 0; i < READERS; i++) {
      const reader = await connectSse(`${server.url}/api/stream`, server.auth);
      reader.response.pause();
      readers.push(reader);
    }
    const body = JSON.stringify({ a: 'x'.repeat(EVENT_BYTES - 8) });
    const before = process.memoryUsage().arrayBuffers;
    const answer = await fetch(`${server.url}/api/webhook/big`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(answer.status).toBe(200);
    await answer.arrayBuffer();
    // Every reader's socket took the whole event (bytesWritten counts what it queues)...
    await eventually(() => sockets.filter((socket) => socket.bytesWritten >= EVENT_BYTES).length === READERS, 20_000);
    // ...and most hold most of it unsent (now and then the kernel takes a whole event for one).
    const holding = sockets.filter((socket) => socket.writableLength > EVENT_BYTES / 2).length;
    expect(holding).toBeGreaterThanOrEqual(READERS - 5);
    const grown = process.memoryUsage().arrayBuffers - before;
    // One copy of the frame, plus the request body on both ends and the row
    // read back, some of it garbage not yet collected: 25 MB measured. A
    // copy per reader measured 390 MB (25 readers holding would be over 100 MB).
    expect(grown, `${Math.round(grown / 1e6)} MB`).toBeLessThan(15 * EVENT_BYTES);
  });
});
