import { spawnServer, type ServerProcess } from './server-process.js';
import { tempDir } from './temp-dir.js';

export const API_TOKEN = 'process-test-token-0123456789';

/**
 * Tracks the server processes and temp dirs that tests start, so that
 * `cleanup()` (from `afterEach`, `afterAll`, or `childrenOf` for concurrent
 * tests) kills whatever is still running and removes the directories,
 * whatever the test did.
 */
export class ServerChildren {
  private readonly servers: ServerProcess[] = [];
  private readonly dirs: Array<{ remove: () => void }> = [];
  private readonly signalled = new WeakSet<ServerProcess>();

  /** A fresh data directory, removed by `cleanup()`. */
  dataDir(): string {
    const dir = tempDir('reception-process-');
    this.dirs.push(dir);
    return dir.path;
  }

  async start(env: Record<string, string>): Promise<ServerProcess> {
    const server = await spawnServer(env);
    this.servers.push(server);
    void server.exited.then((code) => {
      // A server that dies without being told to makes every later request
      // fail with ECONNREFUSED: say why, for whoever reads the failure.
      if (!this.signalled.has(server)) {
        console.warn(
          `[server ${server.child.pid ?? '?'} exited unexpectedly: ${code}] ` +
            `stderr: ${server.stderr().slice(-2000)} last logs: ${server.logs.slice(-3).join('\n')}`,
        );
      }
    });
    return server;
  }

  /** Sends `signal` to a server; its exit is then expected. */
  signal(server: ServerProcess, signal: NodeJS.Signals): void {
    this.signalled.add(server);
    server.child.kill(signal);
  }

  async cleanup(): Promise<void> {
    for (const server of this.servers.splice(0)) {
      this.signalled.add(server);
      await killAndWait(server);
    }
    for (const dir of this.dirs.splice(0)) dir.remove();
  }
}

/** Processes and temp dirs for one test, killed and removed when it finishes (for concurrent tests). */
export function childrenOf(context: { onTestFinished: (fn: () => Promise<void>) => void }): ServerChildren {
  const children = new ServerChildren();
  context.onTestFinished(() => children.cleanup());
  return children;
}

/** SIGKILLs the process unless it already exited, and waits for it. */
export async function killAndWait(server: ServerProcess): Promise<void> {
  const { child } = server;
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await withTimeout(server.exited, 5000, 'the server did not exit after SIGKILL');
}

/** Resolves with the exit code (or signal) and how long it took, or rejects after `ms`. */
export async function timedExit(server: ServerProcess, ms: number): Promise<{ code: number | string; ms: number }> {
  const started = performance.now();
  const code = await withTimeout(server.exited, ms, `the server did not exit within ${ms} ms`);
  return { code, ms: performance.now() - started };
}

export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
