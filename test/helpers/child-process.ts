import { spawn, type ChildProcess } from 'node:child_process';

export interface ChildHandle {
  child: ChildProcess;
  /** Complete stdout lines so far. */
  lines: string[];
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code, or the signal's name. */
  exited: Promise<number | string>;
  /** Resolves once `done()` holds (checked on each output and at exit); rejects at exit or after `timeoutMs`, with the output. */
  waitFor: (done: () => boolean, what: () => string, timeoutMs: number) => Promise<void>;
  waitForLines: (count: number, timeoutMs?: number) => Promise<string[]>;
  waitForStderr: (pattern: RegExp, timeoutMs?: number) => Promise<void>;
  waitForStdout: (pattern: RegExp, timeoutMs?: number) => Promise<void>;
  /** SIGTERM, then SIGKILL if it has not exited within 5 s. */
  stop: () => Promise<number | string>;
  kill: () => Promise<number | string>;
}

const running = new Set<ChildProcess>();

/**
 * Starts `command ...args` with exactly `env` (nothing of the test runner's
 * environment is passed on unless `env` holds it), its output collected and
 * awaitable. The tests' one way to start a child process: the server
 * (server-process.ts) and the command line (cli.ts) start through it.
 */
export function startChild(command: string, args: string[], env: Record<string, string>, cwd?: string): ChildHandle {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const waiter of [...waiters]) waiter();
  };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    const parts = stdout.split('\n');
    lines.splice(0, lines.length, ...parts.slice(0, -1));
    wake();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    wake();
  });
  const exited = new Promise<number | string>((resolve) => {
    // 'close': the process has exited and its output has all been read.
    child.once('close', (code, signal) => {
      running.delete(child);
      resolve(code ?? signal ?? 'unknown');
      wake();
    });
  });
  const waitFor = (done: () => boolean, what: () => string, timeoutMs: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (!done()) {
          if (child.exitCode !== null || child.signalCode !== null) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(
              new Error(
                `${what()}: the process exited (${child.exitCode ?? child.signalCode ?? ''})\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}`,
              ),
            );
          }
          return;
        }
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`${what()} within ${timeoutMs} ms\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  const stop = async (signal: NodeJS.Signals): Promise<number | string> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  return {
    child,
    lines,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitFor,
    waitForLines: async (count, timeoutMs = 15_000) => {
      await waitFor(
        () => lines.length >= count,
        () => `only ${lines.length} of ${count} stdout lines`,
        timeoutMs,
      );
      return lines;
    },
    waitForStderr: (pattern, timeoutMs = 15_000) =>
      waitFor(
        () => pattern.test(stderr),
        () => `stderr did not match ${String(pattern)}`,
        timeoutMs,
      ),
    waitForStdout: (pattern, timeoutMs = 15_000) =>
      waitFor(
        () => pattern.test(stdout),
        () => `stdout did not match ${String(pattern)}`,
        timeoutMs,
      ),
    stop: () => stop('SIGTERM'),
    kill: () => stop('SIGKILL'),
  };
}

/** SIGKILLs every child still running (for afterEach). */
export function killAllChildren(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}
