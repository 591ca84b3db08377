// `npm start` runs this first (prestart): it builds (`npm run build:quick`, the transpile-only build
// of scripts/transpile.mjs) only when something the build reads changed since the last build
// finished, so that a second start takes a second instead of a minute. Both builds write the stamp
// (`--stamp`) when they succeed; a build that failed or was stopped leaves the old stamp, so the
// next start builds again.
// Usage: node scripts/build-if-stale.mjs         build when stale, say nothing when current
//        node scripts/build-if-stale.mjs --stamp  record that the build just finished
//        node scripts/build-if-stale.mjs --check  exit 0 when current, 1 (saying why) when a build is due
//        --root DIR: another checkout than this one (the tests use it)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

/** What the build reads: the sources, the page, and the files that say how to build them. */
const INPUTS = [
  'src',
  'web',
  'scripts/copy-assets.mjs',
  'scripts/transpile.mjs',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
];
/** Not inputs: what the build writes, and what only the tests and the linter read. */
const SKIPPED = new Set(['web/dist', 'node_modules']);
const STAMP = 'dist/.build-stamp';

/** The newest modification time (ms) among the build's inputs under `root`, and the file that has it. */
export function newestInput(root) {
  let newest = { at: 0, file: '' };
  const visit = (path) => {
    const rel = relative(root, path);
    if (SKIPPED.has(rel) || !existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) {
      for (const name of readdirSync(path)) visit(join(path, name));
    } else if (stat.mtimeMs > newest.at) {
      newest = { at: stat.mtimeMs, file: rel };
    }
  };
  for (const input of INPUTS) visit(join(root, input));
  return newest;
}

/** Why a build is due under `root`, or undefined when the last build is newer than every input. */
export function staleBecause(root) {
  const stamp = join(root, STAMP);
  if (!existsSync(stamp)) return 'no finished build yet';
  if (!existsSync(join(root, 'dist/src/main.js'))) return 'dist/src/main.js is missing';
  const built = statSync(stamp).mtimeMs;
  const { at, file } = newestInput(root);
  return at > built ? `${file} changed since the last build` : undefined;
}

export function writeStamp(root) {
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, STAMP), `${new Date().toISOString()}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--root');
  const root = at === -1 ? fileURLToPath(new URL('..', import.meta.url)) : (process.argv[at + 1] ?? '.');
  if (process.argv.includes('--stamp')) {
    writeStamp(root);
  } else {
    const reason = staleBecause(root);
    if (process.argv.includes('--check')) {
      if (reason !== undefined) process.stdout.write(`${reason}\n`);
      process.exit(reason === undefined ? 0 : 1);
    }
    if (reason !== undefined) {
      process.stderr.write(
        `Building Reception before it starts (${reason}): TypeScript into dist/, transpiled without a ` +
          'type check (`npm run build` checks types), and the web page into web/dist; a few seconds. ' +
          'Then it starts and prints the address of its page.\n',
      );
      const build = spawnSync('npm', ['run', 'build:quick', '--silent'], { cwd: root, stdio: 'inherit' });
      process.exit(build.status ?? 1);
    }
  }
}
