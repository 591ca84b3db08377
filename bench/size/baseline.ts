import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This checkout's root (bench/size/ is two levels below it, in dist/ three). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The build before search and event types (issue 19), to measure ingest
 * without them in the same run: `BENCH_BASELINE_DIR` when given (a built
 * checkout), else the commit where this branch left `main`
 * (`git merge-base HEAD main`, or `BENCH_BASELINE_REF`), unpacked with `git
 * archive` into `dir` (no worktree is registered), given this checkout's
 * node_modules and built. Answers the path of its `dist/src/main.js`.
 */
export function baselineMain(dir: string, log: (line: string) => void): { main: string; ref: string } {
  const given = process.env.BENCH_BASELINE_DIR;
  if (given !== undefined && given !== '') {
    const main = join(given, 'dist', 'src', 'main.js');
    if (!existsSync(main)) throw new Error(`BENCH_BASELINE_DIR=${given} has no dist/src/main.js: build it first`);
    return { main, ref: `BENCH_BASELINE_DIR=${given}` };
  }
  const git = (...args: string[]): string => execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' }).trim();
  const ref = process.env.BENCH_BASELINE_REF ?? git('merge-base', 'HEAD', 'main');
  const commit = git('rev-parse', '--short', ref);
  const tree = join(dir, `baseline-${commit}`);
  if (!existsSync(join(tree, 'dist', 'src', 'main.js'))) {
    log(`baseline: unpacking ${commit} into ${tree} and building it`);
    mkdirSync(tree, { recursive: true });
    execFileSync('sh', ['-c', `git -C '${ROOT}' archive ${commit} | tar -x -C '${tree}'`]);
    symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
    execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: tree, stdio: 'ignore' });
    execFileSync('node', ['scripts/copy-assets.mjs'], { cwd: tree, stdio: 'ignore' });
  }
  return { main: join(tree, 'dist', 'src', 'main.js'), ref: commit };
}
