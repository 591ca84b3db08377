import { fileURLToPath } from 'node:url';
import { killAllChildren, startChild, type ChildHandle } from './child-process.js';

/** The compiled command line (`npm run build` first). */
export const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

/** A running command line process. */
export type CliProcess = ChildHandle;

/**
 * Starts `node dist/src/cli/main.js ...args` with a clean environment
 * (PATH, HOME and what `env` gives; no RECEPTION_* from the test runner).
 */
export function startCli(args: string[], env: Record<string, string> = {}): CliProcess {
  return startChild(process.execPath, [CLI, ...args], { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env });
}

export interface CliResult {
  code: number | string;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to completion (killed after `timeoutMs`). */
export async function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 15_000): Promise<CliResult> {
  const cli = startCli(args, env);
  const timer = setTimeout(() => cli.child.kill('SIGKILL'), timeoutMs);
  const code = await cli.exited;
  clearTimeout(timer);
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

/** SIGKILLs every CLI process still running (for afterEach). */
export const killAllClis = killAllChildren;
