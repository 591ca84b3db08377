import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { eventually } from './eventually.js';

/** `script` (util-linux) gives bash a real terminal, as a person's shell has. */
export const hasScript = ((): boolean => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    execFileSync('bash', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const PROMPT = 'READY$ ';

/**
 * An interactive bash on a pseudo-terminal, with readline, history
 * expansion and bracketed paste on (bash 5.1 and later turn it on by
 * default): what "paste into a terminal" means, short of a terminal emulator.
 */
export class InteractiveBash {
  private output = '';

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.on('data', (chunk: Buffer) => {
      this.output += chunk.toString('latin1');
    });
  }

  static async start(home: string): Promise<InteractiveBash> {
    const child = spawn('script', ['-q', '-c', 'bash --norc --noprofile -i', '/dev/null'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TERM: 'xterm', LANG: 'C.UTF-8', PS1: PROMPT },
      cwd: home,
    });
    const shell = new InteractiveBash(child);
    await eventually(() => shell.output.includes(PROMPT), 10_000);
    return shell;
  }

  /** True once readline asked the terminal for bracketed paste (ESC [?2004h). */
  get bracketedPaste(): boolean {
    return this.output.includes('\x1b[?2004h');
  }

  /** Pastes `text` as a terminal does in bracketed-paste mode. Nothing is typed after it. */
  paste(text: string): void {
    this.child.stdin.write(`\x1b[200~${text}\x1b[201~`);
  }

  /** Presses keys: `\r` is Enter. */
  type(keys: string): void {
    this.child.stdin.write(keys);
  }

  /** Ctrl-C: drops whatever is on the command line (an unclosed quote too) and waits for a fresh prompt. */
  async interrupt(): Promise<void> {
    const prompts = this.output.split(PROMPT).length;
    this.child.stdin.write('\x03');
    await eventually(() => this.output.split(PROMPT).length > prompts, 5000);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        resolve();
        return;
      }
      this.child.once('exit', () => resolve());
      // script hangs up on the shell it started when it is told to stop.
      this.child.kill('SIGTERM');
    });
  }
}
