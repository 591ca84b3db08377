import { pathToFileURL } from 'node:url';
import { CLI, type CliResult } from './cli.js';
import { startChild } from './child-process.js';

/**
 * The compiled command line, run several times in ONE Node process: each
 * command line evaluates `dist/src/cli/main.js` afresh (a new module URL;
 * the modules it imports are loaded once), with `process.argv` set to it,
 * stdout and stderr captured and `process.exit` caught. Loading the CLI's
 * modules is most of what a spawn costs (about 0.7 s of CPU), so this is for
 * the many command lines whose point is what is printed and the exit code
 * (help texts, usage mistakes); each of those behaviours also keeps a real
 * spawn (`runCli`) for what is about the process itself.
 */
const RUNNER = `
const runs = JSON.parse(process.env.RECEPTION_TEST_CLI_RUNS);
const main = ${JSON.stringify(pathToFileURL(CLI).href)};
const realExit = process.exit.bind(process);
const realOut = process.stdout.write.bind(process.stdout);
const results = [];
const capture = (append) => (chunk, encoding, callback) => {
  append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
  const done = typeof encoding === 'function' ? encoding : callback;
  if (typeof done === 'function') process.nextTick(done);
  return true;
};
for (const [n, argv] of runs.entries()) {
  let stdout = '';
  let stderr = '';
  const listeners = { SIGINT: process.listenerCount('SIGINT'), SIGTERM: process.listenerCount('SIGTERM') };
  const code = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), 15000);
    process.exit = (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode ?? 0);
    };
    process.stdout.write = capture((text) => (stdout += text));
    process.stderr.write = capture((text) => (stderr += text));
    process.argv = [process.argv[0], ${JSON.stringify(CLI)}, ...argv];
    import(main + '?run=' + n).catch((error) => {
      stderr += String(error);
      resolve('import failed');
    });
  });
  for (const signal of ['SIGINT', 'SIGTERM'])
    for (const listener of process.listeners(signal).slice(listeners[signal])) process.off(signal, listener);
  results.push({ code, stdout, stderr });
}
process.stdout.write = realOut;
realOut(JSON.stringify(results), () => realExit(0));
`;

/** Runs each command line of `runs` through the CLI's main module in one process (see above), in order. */
export async function runCliInOneProcess(runs: string[][], env: Record<string, string> = {}): Promise<CliResult[]> {
  const child = startChild(process.execPath, ['--input-type=module', '--eval', RUNNER], {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    ...env,
    RECEPTION_TEST_CLI_RUNS: JSON.stringify(runs),
  });
  const timer = setTimeout(() => child.child.kill('SIGKILL'), 15_000 + runs.length * 5_000);
  const code = await child.exited;
  clearTimeout(timer);
  if (code !== 0)
    throw new Error(`the CLI runner exited ${String(code)}\n--- stdout:\n${child.stdout()}\n--- stderr:\n${child.stderr()}`);
  return JSON.parse(child.stdout()) as CliResult[];
}
