import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

// scripts/build-if-stale.mjs is what `npm start` runs first: it builds only when an input of the
// build changed since the last finished build (the stamp `npm run build` writes). Run here on
// small checkouts written for each case, as npm runs it.
const SCRIPT = join(import.meta.dirname, '..', '..', 'scripts', 'build-if-stale.mjs');
const made: string[] = [];

afterEach(() => {
  for (const root of made.splice(0)) rmSync(root, { recursive: true, force: true });
});

function checkout(): string {
  const root = mkdtempSync(join(tmpdir(), 'build-if-stale-'));
  made.push(root);
  const files = ['src/main.ts', 'web/src/main.ts', 'package.json', 'package-lock.json', 'tsconfig.json', 'dist/src/main.js'];
  for (const file of files) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), '');
  }
  return root;
}

function run(root: string, ...args: string[]): { status: number | null; stdout: string } {
  const result = spawnSync(process.execPath, [SCRIPT, ...args, '--root', root], { encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout };
}

/** Sets a file's times `seconds` from now (a build finishes after its inputs were written). */
function touch(root: string, file: string, seconds: number): void {
  const path = join(root, file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, 'changed');
  const at = new Date(Date.now() + seconds * 1000);
  utimesSync(path, at, at);
}

describe('build-if-stale', () => {
  it('asks for a build when no build ever finished', () => {
    expect(run(checkout(), '--check')).toEqual({ status: 1, stdout: 'no finished build yet\n' });
  });

  it('skips the build when the last one finished after every input changed', () => {
    const root = checkout();
    expect(run(root, '--stamp').status).toBe(0);
    expect(run(root, '--check')).toEqual({ status: 0, stdout: '' });
  });

  it('asks for a build after a source, the page or the lock file changed, naming the file', () => {
    for (const file of ['src/inbox/new-file.ts', 'web/src/main.ts', 'package-lock.json']) {
      const root = checkout();
      run(root, '--stamp');
      touch(root, file, 5);
      expect(run(root, '--check'), file).toEqual({ status: 1, stdout: `${file} changed since the last build\n` });
    }
  });

  it('does not count what the build itself writes (web/dist) or what it does not read (test/)', () => {
    const root = checkout();
    run(root, '--stamp');
    touch(root, 'web/dist/index.html', 5);
    touch(root, 'test/unit/some.test.ts', 5);
    expect(run(root, '--check').status).toBe(0);
  });

  it('asks for a build when dist/src/main.js is gone, though the stamp is there', () => {
    const root = checkout();
    run(root, '--stamp');
    rmSync(join(root, 'dist/src/main.js'));
    expect(run(root, '--check')).toEqual({ status: 1, stdout: 'dist/src/main.js is missing\n' });
  });
});
