import { readFileSync } from 'node:fs';
import { startChild, type ChildHandle } from './child-process.js';
import { MAIN } from './server-process.js';

export interface TerminalServer {
  /** script(1), the terminal's owner: killing it closes the terminal (the server gets SIGHUP), it does not stop the server. */
  terminal: ChildHandle;
  /** The server's process id (not a child of the test: script's). */
  pid: number;
  /** The process has ended (gone, or a zombie nobody reaped). */
  ended: () => boolean;
  /** SIGKILLs the server if it still runs, and script(1) (for onTestFinished). */
  kill: () => Promise<void>;
}

/**
 * The compiled server with a pseudo-terminal as its stdin, stdout and
 * stderr, as in a person's terminal window: run by script(1), whose end is
 * the window closing. The shell that script starts prints its id and
 * `exec`s the server, so the server is the terminal's session leader.
 * Resolves once the server logs "listening".
 */
export async function startServerOnTerminal(env: Record<string, string>, timeoutMs = 30_000): Promise<TerminalServer> {
  const command = `echo reception-pid=$$; exec '${process.execPath}' '${MAIN}'`;
  const terminal = startChild('script', ['-qfec', command, '/dev/null'], { PATH: process.env.PATH ?? '', ...env });
  let pid = 0;
  const ended = (): boolean => pid === 0 || processEnded(pid);
  const kill = async (): Promise<void> => {
    if (!ended()) process.kill(pid, 'SIGKILL');
    await terminal.kill();
  };
  try {
    await terminal.waitForStdout(/reception-pid=\d+/, timeoutMs);
    pid = Number(/reception-pid=(\d+)/.exec(terminal.stdout())?.[1]);
    await terminal.waitForStdout(/listening/, timeoutMs);
  } catch (error) {
    await kill();
    throw error;
  }
  return { terminal, pid, ended, kill };
}

/** Whether process `pid` has ended: no longer listed, or a zombie (exited, not yet reaped by whoever adopted it). */
export function processEnded(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return true;
  }
  // "pid (comm) state ...": comm may hold spaces and parentheses, the state follows the last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}
