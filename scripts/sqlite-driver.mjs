// `npm ci` runs this after it installed everything (postinstall): it makes sure the SQLite driver
// for this Node is there, and compiles it only where one must be compiled.
//
// - Node 22 and later use better-sqlite3 13 (the `better-sqlite3-napi` alias), whose builds come
//   inside its npm package: nothing to do.
// - Node 20 uses better-sqlite3 12, which has to be compiled from source here (its installer would
//   download a prebuilt binary, and this project installs from the npm registry only).
//
// better-sqlite3's own install step is switched off (`allowScripts` in package.json), because npm
// would run it on every Node, and on Node 22 it compiled a driver nothing loads (two minutes of a
// fresh install). npm has no way to run a dependency's install step on one Node only; this script is
// that way. With an npm that does not know `allowScripts` (10 and older), better-sqlite3 compiles
// itself as before, and this script then finds a driver that loads and does nothing.
//
// A driver compiled here is kept in the user's cache (~/.cache/reception, or RECEPTION_DRIVER_CACHE;
// `off` keeps none), named by better-sqlite3's version and Node's ABI, platform and architecture: the
// next install on this machine (a fresh clone, CI's clean clone, `rm -rf node_modules`) copies it back
// in a second instead of compiling for minutes, and compiles after all when the copy does not load.
//
// Usage: node scripts/sqlite-driver.mjs          compile when needed (postinstall)
//        node scripts/sqlite-driver.mjs --plan   print what it would do, and why
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/** The first Node major whose driver comes prebuilt (src/platform/db/sqlite/driver.ts picks the same). */
export const PREBUILT_FROM = 22;

/**
 * What to do for a Node major, given whether the compiled driver loads now:
 * `{ compile: false | true, why }`.
 */
export function plan(nodeMajor, loads) {
  if (nodeMajor >= PREBUILT_FROM) {
    return { compile: false, why: `Node ${nodeMajor} uses better-sqlite3 13, prebuilt in its npm package` };
  }
  if (loads === true) return { compile: false, why: `better-sqlite3 12 is already built for Node ${nodeMajor}` };
  return {
    compile: true,
    why: `Node ${nodeMajor} needs better-sqlite3 12 compiled from source (${loads})`,
  };
}

/** `true` when better-sqlite3 12 opens a database on this Node, or why it does not. */
export function driverLoads() {
  try {
    const Database = require('better-sqlite3');
    new Database(':memory:').close();
    return true;
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return `it does not load: ${message}`;
  }
}

/** node-gyp as npm runs it for install steps: npm says where (npm_config_node_gyp), or it is beside npm. */
function nodeGyp() {
  const candidates = [process.env.npm_config_node_gyp];
  if (process.env.npm_execpath) {
    candidates.push(join(dirname(process.env.npm_execpath), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  }
  return candidates.find((path) => path !== undefined && existsSync(path));
}

/** The compiled driver inside the package, where better-sqlite3 loads it from. */
function builtDriver(dir) {
  return join(dir, 'build', 'Release', 'better_sqlite3.node');
}

/** Where a driver compiled for this Node is kept between installs; undefined: no cache. */
export function cachedDriverPath(version, env = process.env) {
  if (env.RECEPTION_DRIVER_CACHE === 'off') return undefined;
  const base = env.RECEPTION_DRIVER_CACHE ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'reception');
  const { modules } = process.versions;
  return join(base, `better-sqlite3-${version}-node-abi${modules}-${process.platform}-${process.arch}.node`);
}

function packageDir() {
  const dir = dirname(require.resolve('better-sqlite3/package.json'));
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  return { dir, version };
}

/** Copies a kept driver in; true when it then loads. */
function restore() {
  const { dir, version } = packageDir();
  const cached = cachedDriverPath(version);
  if (cached === undefined || !existsSync(cached)) return false;
  mkdirSync(dirname(builtDriver(dir)), { recursive: true });
  copyFileSync(cached, builtDriver(dir));
  if (driverLoads() === true) {
    process.stderr.write(
      `reception: the SQLite driver (better-sqlite3 ${version}) was compiled before on this machine: taken from ${cached}\n`,
    );
    return true;
  }
  rmSync(builtDriver(dir), { force: true });
  return false;
}

/** Keeps the driver just compiled for the next install; a cache that cannot be written is skipped. */
function keep() {
  const { dir, version } = packageDir();
  const cached = cachedDriverPath(version);
  if (cached === undefined) return;
  try {
    mkdirSync(dirname(cached), { recursive: true });
    copyFileSync(builtDriver(dir), `${cached}.${process.pid}`);
    renameSync(`${cached}.${process.pid}`, cached);
  } catch (error) {
    process.stderr.write(
      `reception: the compiled driver is not kept for the next install (${error instanceof Error ? error.message : String(error)})\n`,
    );
  }
}

function compile() {
  const { dir } = packageDir();
  const gyp = nodeGyp();
  if (gyp === undefined) {
    process.stderr.write(
      'reception: cannot find node-gyp to compile the SQLite driver. Run `npm rebuild better-sqlite3 ' +
        '--dangerously-allow-all-scripts`, or use Node 22 or later, which needs no compile.\n',
    );
    return 1;
  }
  process.stderr.write(
    `reception: compiling the SQLite driver (better-sqlite3 12) for Node ${process.versions.node} with node-gyp; ` +
      'this takes a few minutes. Node 22 and later need no compile.\n',
  );
  const started = Date.now();
  const run = spawnSync(process.execPath, [gyp, 'rebuild', '--release'], { cwd: dir, stdio: 'inherit' });
  if (run.status !== 0) {
    process.stderr.write(
      'reception: compiling better-sqlite3 failed (above). It needs python3, make and g++ ' +
        '(Debian: apt-get install python3 make g++); or use Node 22 or later, which needs no compile.\n',
    );
    return run.status ?? 1;
  }
  const loads = driverLoads();
  if (loads !== true) {
    process.stderr.write(`reception: better-sqlite3 was compiled, but ${loads}\n`);
    return 1;
  }
  process.stderr.write(`reception: the SQLite driver is built (${Math.round((Date.now() - started) / 1000)} s)\n`);
  keep();
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const major = Number(process.versions.node.split('.')[0]);
  const decision = plan(major, major >= PREBUILT_FROM ? true : driverLoads());
  if (process.argv.includes('--plan')) {
    process.stdout.write(`${decision.compile ? 'compile' : 'nothing to compile'}: ${decision.why}\n`);
  } else if (decision.compile && !restore()) {
    process.exitCode = compile();
  }
}
