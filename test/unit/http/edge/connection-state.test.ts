import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Connections } from '../../../../src/receive/edge/connection-state.js';

/** A real server on loopback that hands each request's answer to the test instead of answering it. */
async function holdingServer(connections: Connections): Promise<{ server: Server; next: () => Promise<ServerResponse> }> {
  const waiting: ServerResponse[] = [];
  const wanted: ((res: ServerResponse) => void)[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    connections.of(req.socket).begin(res);
    req.resume();
    const take = wanted.shift();
    if (take === undefined) waiting.push(res);
    else take(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const next = (): Promise<ServerResponse> => {
    const held = waiting.shift();
    return held === undefined ? new Promise((resolve) => wanted.push(resolve)) : Promise.resolve(held);
  };
  return { server, next };
}

function finished(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => res.once('finish', () => resolve()));
}

describe('ConnectionState', () => {
  const open: { server?: Server; client?: Socket } = {};
  afterEach(async () => {
    open.client?.destroy();
    open.server?.closeAllConnections();
    await new Promise<void>((resolve) => (open.server === undefined ? resolve() : open.server.close(() => resolve())));
  });

  it('knows the answer being written on a connection: the first unfinished one, in the order Node writes pipelined answers', async () => {
    const connections = new Connections();
    const { server, next } = await holdingServer(connections);
    open.server = server;
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    open.client = client;
    client.on('data', () => undefined);
    client.write('GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n');
    const first = await next();
    const second = await next();
    const connection = connections.of(first.req.socket);
    expect(connections.of(second.req.socket)).toBe(connection);
    expect(connection.answerInFlight()).toBe(first);

    // The second answer ends first, but Node writes it only after the first: the first stays in flight.
    second.end('b');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(connection.answerInFlight()).toBe(first);

    const bothOut = Promise.all([finished(first), finished(second)]);
    first.end('a');
    await bothOut;
    expect(connection.answerInFlight()).toBeUndefined();
  });

  it('lets a webhook request behind an answer that may close its connection wait for that answer', async () => {
    const connections = new Connections();
    const { server, next } = await holdingServer(connections);
    open.server = server;
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    open.client = client;
    client.on('data', () => undefined);
    client.write('GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n');
    const first = await next();
    const second = await next();
    const connection = connections.of(first.req.socket);

    expect(connection.mayReadRequest(first, true)).toBe(true);
    const behind = connection.mayReadRequest(second, false);
    expect(behind).toBeInstanceOf(Promise);
    expect(connection.hasRequestBehind(first)).toBe(true);
    expect(connection.hasRequestBehind(second)).toBe(false);

    // The first answer closes the connection: the request behind it is not to be read.
    first.writeHead(417, { connection: 'close' }).end();
    await expect(behind).resolves.toBe(false);
  });
});
