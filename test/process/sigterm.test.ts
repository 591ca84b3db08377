import { connect } from 'node:net';
import { describe, it } from 'vitest';
import { readyLine, type ServerProcess } from '../helpers/server-process.js';
import { RawConnection, postHead } from '../helpers/raw-http.js';
import { API_TOKEN, childrenOf, sleep, timedExit, withTimeout } from '../helpers/server-children.js';

/**
 * CONTRACT 5: on SIGTERM (and SIGINT) Reception stops accepting, answers
 * every request already in flight (one whose body is still arriving counts,
 * for up to the grace period), commits, and exits 0.
 *
 * The tests run concurrently, each with its own processes, killed when it ends.
 */

const auth = { authorization: `Bearer ${API_TOKEN}` };

function envFor(data: string, extra: Record<string, string> = {}): Record<string, string> {
  return { RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, ...extra };
}

/** True when nothing accepts connections on the server's port any more. */
function refusesConnections(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** Resolves true if the process exits within `ms`. */
async function exitsWithin(server: ServerProcess, ms: number): Promise<boolean> {
  return Promise.race([server.exited.then(() => true), sleep(ms).then(() => false)]);
}

/**
 * Opens a webhook POST and sends its head and the first half of its body.
 * `Expect: 100-continue` (as curl sends for larger bodies) tells when the
 * server handles the request: from then on it is in flight, not idle.
 */
async function halfSent(server: ServerProcess, body: Buffer): Promise<{ connection: RawConnection; rest: Buffer }> {
  const connection = await RawConnection.open(server.url);
  const half = Math.floor(body.length / 2);
  await connection.write(postHead('/api/webhook/drain', body.length, 'Expect: 100-continue\r\n'));
  if (!(await withTimeout(connection.continued(), 5000, 'no 100 Continue'))) throw new Error('closed before 100 Continue');
  await connection.write(body.subarray(0, half));
  // Let the first half reach the server's body reader.
  await sleep(50);
  return { connection, rest: body.subarray(half) };
}

describe.concurrent('graceful shutdown', () => {
  it.for(['SIGTERM', 'SIGINT'] as const)(
    '%s: answers the request whose body completes after the signal, exits 0, keeps the delivery',
    async (signal, context) => {
      const { expect } = context;
      const children = childrenOf(context);
      const data = children.dataDir();
      const server = await children.start(envFor(data));
      const body = Buffer.from(JSON.stringify({ marker: `drain-${signal}`, text: 'x'.repeat(4000) }));
      const { connection, rest } = await halfSent(server, body);

      const signalledAt = performance.now();
      children.signal(server, signal);
      // It stops accepting new connections...
      let refused = false;
      for (let i = 0; i < 50 && !refused; i++) {
        refused = await refusesConnections(server.url);
        if (!refused) await sleep(20);
      }
      expect(refused).toBe(true);
      // ...but waits for the request in flight instead of exiting.
      expect(await exitsWithin(server, 600)).toBe(false);

      await connection.write(rest);
      const answer = await withTimeout(connection.response(), 3000, 'no answer after the body completed');
      expect(answer?.status).toBe(200);
      expect(answer?.headers.connection).toBe('close');
      const { id } = JSON.parse(answer?.body ?? '{}') as { id?: string };
      expect(typeof id).toBe('string');

      const exit = await timedExit(server, 5000);
      expect(exit.code).toBe(0);
      // Exited because the work was done, not because the 10 s grace ran out.
      expect(performance.now() - signalledAt).toBeLessThan(6000);
      expect(server.logs.some((line) => line.includes('"msg":"stopped"'))).toBe(true);

      const restarted = await children.start(envFor(data));
      const raw = await fetch(`${restarted.url}/api/deliveries/${id ?? ''}/raw`, { headers: auth });
      expect(raw.status).toBe(200);
      expect(Buffer.from(await raw.arrayBuffer()).equals(body)).toBe(true);
    },
  );

  it('answers and keeps requests pipelined behind the one in flight: only the last answer closes the connection', async (context) => {
    const { expect } = context;
    const children = childrenOf(context);
    const data = children.dataDir();
    const server = await children.start(envFor(data));
    const body = Buffer.from(JSON.stringify({ marker: 'pipelined-0', text: 'x'.repeat(4000) }));
    const { connection, rest } = await halfSent(server, body);
    children.signal(server, 'SIGTERM');
    await sleep(300);
    // The rest of the body in flight, and two more requests behind it, in one write.
    const behind = [1, 2].map((i) => Buffer.from(JSON.stringify({ marker: `pipelined-${i}` })));
    await connection.write(
      Buffer.concat([rest, ...behind.flatMap((b) => [Buffer.from(postHead('/api/webhook/drain', b.length)), b])]),
    );
    await withTimeout(connection.closed, 5000, 'the connection stayed open');
    const answers = connection.responsesSoFar();
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.map((a) => a.headers.connection)).toEqual(['keep-alive', 'keep-alive', 'close']);
    expect((await timedExit(server, 5000)).code).toBe(0);

    // Every request answered 200 is kept, and nothing else.
    const restarted = await children.start(envFor(data));
    const listed = (await (await fetch(`${restarted.url}/api/deliveries?source=drain`, { headers: auth })).json()) as {
      items: Array<{ id: string }>;
    };
    const ids = answers.map((a) => (JSON.parse(a.body) as { id: string }).id);
    expect(listed.items.map((d) => d.id).sort()).toEqual([...ids].sort());
  });

  // (SIGINT is covered by the drain above and the unread stdout below.)
  it('SIGTERM with no request in flight: exits 0 promptly, without waiting for an idle keep-alive connection', async (context) => {
    const { expect } = context;
    const children = childrenOf(context);
    const server = await children.start(envFor(children.dataDir(), { RECEPTION_SHUTDOWN_GRACE_MS: '8000' }));
    const connection = await RawConnection.open(server.url);
    const body = Buffer.from('{"keep":"alive"}');
    await connection.write(postHead('/api/webhook/idle', body.length));
    await connection.write(body);
    const answer = await withTimeout(connection.response(), 3000, 'no answer');
    expect(answer?.status).toBe(200);
    expect(answer?.headers.connection).not.toBe('close');
    expect(connection.isClosed).toBe(false);

    children.signal(server, 'SIGTERM');
    const exit = await timedExit(server, 5000);
    expect(exit.code).toBe(0);
    // Well below the 8 s grace: the idle connection was closed at once.
    expect(exit.ms).toBeLessThan(2000);
    await withTimeout(connection.closed, 1000, 'the idle connection was left open');
  });

  it('a body that never completes is cut at the end of the grace period: exit 0, and the cut request still gets its log line', async (context) => {
    const { expect } = context;
    const children = childrenOf(context);
    const server = await children.start(envFor(children.dataDir(), { RECEPTION_SHUTDOWN_GRACE_MS: '800' }));
    const { connection } = await halfSent(server, Buffer.from(JSON.stringify({ never: 'x'.repeat(4000) })));
    children.signal(server, 'SIGTERM');
    const exit = await timedExit(server, 5000);
    expect(exit.code).toBe(0);
    expect(server.stderr()).toBe(readyLine(server.url));
    const lines = server.logs.map((line) => JSON.parse(line) as { msg?: string; status?: number; req?: { path?: string } });
    const cut = lines.find((line) => line.req?.path === '/api/webhook/drain');
    expect(cut?.status).toBe(499);
    expect(lines.some((line) => line.msg === 'stopped')).toBe(true);
    await withTimeout(connection.closed, 1000, 'the cut connection was left open');
  });

  it('exits 0 even when nobody reads its stdout any more (as with `reception | jq` and Ctrl-C)', async (context) => {
    const { expect } = context;
    const children = childrenOf(context);
    const server = await children.start(envFor(children.dataDir()));
    expect(await fetch(`${server.url}/healthz`).then((res) => res.status)).toBe(200);
    server.child.stdout?.destroy();
    await sleep(100);
    children.signal(server, 'SIGINT');
    const exit = await timedExit(server, 5000);
    expect(exit.code).toBe(0);
    // Not by the 2 s fallback in LogDestination.end: the broken pipe is noticed at once.
    expect(exit.ms).toBeLessThan(1500);
  });

  it('cuts a body that never completes after RECEPTION_SHUTDOWN_GRACE_MS, stores nothing, and still exits 0', async (context) => {
    const { expect } = context;
    const children = childrenOf(context);
    const data = children.dataDir();
    const server = await children.start(envFor(data, { RECEPTION_SHUTDOWN_GRACE_MS: '1500' }));
    const body = Buffer.from(JSON.stringify({ marker: 'never-completes', text: 'y'.repeat(2000) }));
    const { connection } = await halfSent(server, body);

    const signalledAt = performance.now();
    children.signal(server, 'SIGTERM');
    const closedAt = await withTimeout(connection.closed, 5000, 'the stalled connection was never closed');
    const exit = await timedExit(server, 5000);
    expect(exit.code).toBe(0);
    const cutAfter = closedAt - signalledAt;
    // Not before the grace period, and not much after it.
    expect(cutAfter).toBeGreaterThan(1300);
    expect(cutAfter).toBeLessThan(4000);
    expect(server.logs.some((line) => line.includes('grace period over'))).toBe(true);

    const restarted = await children.start(envFor(data));
    const listed = await fetch(`${restarted.url}/api/deliveries`, { headers: auth });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { items: unknown[] }).items).toEqual([]);
  });
});
