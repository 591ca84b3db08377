import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script, no declarations
import { cachedDriverPath, plan, PREBUILT_FROM } from '../../scripts/sqlite-driver.mjs';
// @ts-expect-error: a plain .mjs script, no declarations
import { transpile } from '../../scripts/transpile.mjs';

// What a new user's `npm ci && npm start` runs besides the server: the postinstall step that
// compiles the SQLite driver on Node 20 only (scripts/sqlite-driver.mjs), and the transpile-only
// build of a first start (scripts/transpile.mjs). Measured end to end by bench/first-webhook.sh.
const ROOT = join(import.meta.dirname, '..', '..');
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Plan {
  compile: boolean;
  why: string;
}
const planFor = plan as (major: number, loads: true | string) => Plan;

describe('the SQLite driver at install', () => {
  it('compiles better-sqlite3 12 on Node 20 only when it does not load yet', () => {
    expect(planFor(20, 'it does not load: Could not locate the bindings file')).toMatchObject({ compile: true });
    expect(planFor(20, true)).toMatchObject({ compile: false });
  });

  it('compiles nothing on Node 22 and later, whatever better-sqlite3 12 does', () => {
    for (const major of [22, 24, 26]) {
      const decision = planFor(major, 'it does not load: Could not locate the bindings file');
      expect(decision.compile).toBe(false);
      expect(decision.why).toContain('prebuilt');
    }
  });

  it('agrees with the driver the server loads on each Node', () => {
    const driver = readFileSync(join(ROOT, 'src/platform/db/sqlite/driver.ts'), 'utf8');
    expect(driver).toContain(`>= ${PREBUILT_FROM as number} ? 'better-sqlite3-napi' : 'better-sqlite3'`);
  });

  it('keeps a compiled driver per better-sqlite3 version and Node ABI, where the settings say, or nowhere', () => {
    const path = cachedDriverPath as (version: string, env: Record<string, string>) => string | undefined;
    const abi = process.versions.modules;
    const name = `better-sqlite3-12.11.1-node-abi${abi}-${process.platform}-${process.arch}.node`;
    expect(path('12.11.1', { XDG_CACHE_HOME: '/x/cache' })).toBe(`/x/cache/reception/${name}`);
    expect(path('12.11.1', { RECEPTION_DRIVER_CACHE: '/ci/drivers', XDG_CACHE_HOME: '/x' })).toBe(`/ci/drivers/${name}`);
    expect(path('12.11.1', { RECEPTION_DRIVER_CACHE: 'off' })).toBeUndefined();
    expect(path('12.12.0', {})).not.toBe(path('12.11.1', {}));
  });

  it('is wired into npm: better-sqlite3 builds nothing itself, the postinstall step decides', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      allowScripts: Record<string, boolean>;
    };
    expect(pkg.allowScripts['better-sqlite3']).toBe(false);
    expect(pkg.scripts.postinstall).toBe('node scripts/sqlite-driver.mjs');
    const said = spawnSync(process.execPath, [join(ROOT, 'scripts/sqlite-driver.mjs'), '--plan'], { encoding: 'utf8' });
    expect(said.status).toBe(0);
    expect(said.stdout).toMatch(/^nothing to compile: /);
  });
});

describe('the transpile-only build of a first start', () => {
  function project(files: Record<string, string>): string {
    const root = mkdtempSync(join(tmpdir(), 'transpile-'));
    made.push(root);
    writeFileSync(join(root, 'tsconfig.json'), readFileSync(join(ROOT, 'tsconfig.json')));
    writeFileSync(join(root, 'package.json'), JSON.stringify({ type: 'module' }));
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), text);
    }
    return root;
  }

  function emitted(dir: string): Record<string, string> {
    const out: Record<string, string> = {};
    const visit = (path: string): void => {
      for (const entry of readdirSync(path, { withFileTypes: true })) {
        const full = join(path, entry.name);
        if (entry.name === 'node_modules') continue;
        if (entry.isDirectory()) visit(full);
        else if (entry.name.endsWith('.js')) out[relative(dir, full)] = readFileSync(full, 'utf8');
      }
    };
    visit(dir);
    return out;
  }

  it('writes what tsc writes, file for file, and leaves tests and contract suites out', () => {
    const root = project({
      'src/kinds.ts': "export enum Kind { A = 'a', B = 'b' }\nexport type Pair = [Kind, number];\n",
      'src/main.ts': [
        "import type { Pair } from './kinds.js';",
        "import { Kind } from './kinds.js';",
        'export class Box { constructor(private readonly pair: Pair) {} get kind(): Kind { return this.pair[0]; } }',
        'export const here = import.meta.url;',
        'export default function first(pairs: Pair[]): Kind | undefined { return pairs[0]?.[0]; }',
      ].join('\n'),
      'src/main.test.ts': 'export const t = 1;\n',
      'src/store/contract/suite.ts': 'export const c = 1;\n',
    });
    const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', root], {
      encoding: 'utf8',
    });
    expect(tsc.stdout + tsc.stderr).toBe('');
    const quick = join(root, 'quick');
    expect(transpile(root, quick)).toBe(2);
    const byTsc = emitted(join(root, 'dist'));
    expect(Object.keys(byTsc).sort()).toEqual(['src/kinds.js', 'src/main.js']);
    expect(emitted(quick)).toEqual(byTsc);
  });

  it('stops on a syntax error, naming the file', () => {
    const root = project({ 'src/broken.ts': 'export const x = ;\n' });
    expect(() => transpile(root, join(root, 'quick'))).toThrow(/src\/broken\.ts: Expression expected/);
  });
});
