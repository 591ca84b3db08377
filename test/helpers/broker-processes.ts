import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './free-port.js';
import { listening } from './brokers.js';
import { tempDir } from './temp-dir.js';

/**
 * A broker server of a test's own, on a free loopback port, that the test
 * stops and starts again (the shared ones on the standard ports are never
 * touched). Its data directory outlives a restart: what it acknowledged
 * before it stopped is still there after.
 */
export interface OwnBroker {
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and deletes its data. */
  remove(): Promise<void>;
}

/** nats-server with JetStream, its store in a temp dir. */
export function ownNatsServer(): Promise<OwnBroker> {
  return ownBroker('/usr/sbin/nats-server', (port, dir) => ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], 'nats');
}

/**
 * redis-server with no snapshots (`--save ""`) but an append-only file synced
 * at every write, so that the entries it answered before a restart are there after.
 */
export function ownRedisServer(): Promise<OwnBroker> {
  return ownBroker(
    'redis-server',
    (port, dir) => [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--dir',
      dir,
    ],
    'redis',
  );
}

async function ownBroker(command: string, args: (port: number, dir: string) => string[], scheme: string): Promise<OwnBroker> {
  const port = await freePort();
  const dir = tempDir('reception-broker-');
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    const started = spawn(command, args(port, dir.path), { stdio: 'ignore' });
    child = started;
    const deadline = Date.now() + 15_000;
    while (!(await listening(port))) {
      if (started.exitCode !== null) throw new Error(`${command} exited with ${started.exitCode}`);
      if (Date.now() > deadline) throw new Error(`${command} did not listen on ${port} within 15 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const stop = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    port,
    start,
    stop,
    remove: async () => {
      await stop();
      dir.remove();
    },
  };
}
