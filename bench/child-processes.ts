import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/**
 * Every process the bench starts is registered here, and killed with
 * SIGKILL when the bench exits for any reason (normal end, thrown error,
 * Ctrl-C, SIGTERM), so that no server is left listening.
 */
const running = new Set<ChildProcess>();
let installed = false;

function installCleanup(): void {
  if (installed) return;
  installed = true;
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}, killing ${running.size} child process(es)\n`);
      killAll();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  }
}

/** SIGKILLs every child still running. Synchronous, so safe in an 'exit' handler. */
export function killAll(): void {
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  running.clear();
}

export interface Child {
  process: ChildProcess;
  pid: number;
  /** Resolves with the exit code, or the name of the signal that ended it. */
  exited: Promise<number | string>;
}

/** Starts a process that is killed when the bench ends. */
export function startChild(command: string, args: readonly string[], options: SpawnOptions): Child {
  installCleanup();
  const child = spawn(command, args, options);
  running.add(child);
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve(code ?? signal ?? 'unknown');
    });
    child.once('error', (error) => {
      running.delete(child);
      resolve(`spawn error: ${error.message}`);
    });
  });
  if (child.pid === undefined) {
    // spawn failed (ENOENT...): the 'error' event follows; no pid to report.
    return { process: child, pid: -1, exited };
  }
  return { process: child, pid: child.pid, exited };
}

/** Resolves with the value, or rejects after `ms` with `what` in the message. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Asks a child to stop with `signal`, and SIGKILLs it if it has not exited
 * after `graceMs`. Resolves with how it ended.
 */
export async function stopChild(child: Child, signal: NodeJS.Signals, graceMs: number): Promise<number | string> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return child.exited;
  child.process.kill(signal);
  try {
    return await within(child.exited, graceMs, `pid ${child.pid} after ${signal}`);
  } catch {
    child.process.kill('SIGKILL');
    const ended = await child.exited;
    return `killed after ${graceMs} ms (${ended})`;
  }
}

/**
 * Runs a command to its end (in `env`, else the bench's environment) and returns its stdout; SIGKILLs it and rejects
 * when it runs longer than `timeoutMs` or exits with a non-zero code.
 */
export async function runToEnd(
  command: string,
  args: readonly string[],
  timeoutMs: number,
  env?: NodeJS.ProcessEnv,
): Promise<string> {
  const child = startChild(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(env === undefined ? {} : { env }) });
  let stdout = '';
  let stderr = '';
  child.process.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.process.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  let ended: number | string;
  try {
    ended = await within(child.exited, timeoutMs, `${command} ${args.join(' ')}`);
  } catch (error) {
    child.process.kill('SIGKILL');
    throw error;
  }
  if (ended !== 0) {
    throw new Error(`${command} exited with ${ended}: ${stderr.trim().slice(-2000)}`);
  }
  return stdout;
}
