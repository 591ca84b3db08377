import { fileURLToPath } from 'node:url';
import { storedCount } from './stored-count.js';

/** What the load generator sends (the same bytes on every request). */
export interface LoadRequest {
  /** Path of the measured run. */
  path: string;
  /** Path of the warm-up run: a different source, so that the check below counts only measured requests. */
  warmupPath: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** Where a case may put its files, and what it may use to start. */
export interface CaseContext {
  /** A fresh, empty directory for this case alone. */
  dir: string;
  /** The API token Reception is started with. */
  token: string;
  /** Extra `node` flags (such as `--cpu-prof`) for the server under test. */
  nodeFlags: readonly string[];
}

export interface StartCommand {
  command: string;
  args: string[];
  /** The whole environment of the server (nothing is inherited but PATH). */
  env: Record<string, string>;
}

/**
 * One server to measure. The process must print a JSON line with
 * `"msg": "listening"` and a `url` on stdout once it accepts requests.
 */
export interface BenchCase {
  name: string;
  description: string;
  start(context: CaseContext): StartCommand;
  /** Overrides of the default request (a signed case sets its headers here). */
  request?: (base: LoadRequest) => LoadRequest;
  /**
   * How many deliveries the server stored for the measured path, read back
   * after the run to check it against the 2xx answers. Absent: no store.
   */
  storedCount?: (url: string, context: CaseContext) => Promise<number>;
}

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const BARE_SERVER = fileURLToPath(new URL('./bare-server.js', import.meta.url));

export const MEASURED_SOURCE = 'bench';
export const WARMUP_SOURCE = 'bench-warmup';

function reception(name: string, description: string, extraEnv: Record<string, string>): BenchCase {
  return {
    name,
    description,
    start: ({ dir, token, nodeFlags }) => ({
      command: process.execPath,
      args: [...nodeFlags, MAIN],
      env: {
        RECEPTION_PORT: '0',
        RECEPTION_HOST: '127.0.0.1',
        RECEPTION_DATA: `${dir}/data`,
        RECEPTION_TOKEN: token,
        RECEPTION_LOG_LEVEL: 'info',
        ...extraEnv,
      },
    }),
    storedCount: (url, { token }) => storedCount(url, token, MEASURED_SOURCE),
  };
}

/**
 * The cases of one run, in order. The first one is the baseline that the
 * others are compared to. Add a case here (a signed source, PostgreSQL)
 * and it is measured, checked and reported like the others.
 */
export const CASES: readonly BenchCase[] = [
  {
    name: 'bare node:http',
    description: 'node:http server that reads the whole body and answers 204: the ceiling for Node here',
    start: () => ({ command: process.execPath, args: [BARE_SERVER], env: { BARE_PORT: '0', BARE_HOST: '127.0.0.1' } }),
  },
  reception('reception durability=full', 'Reception, default durability (SQLite synchronous=FULL)', {}),
  reception('reception durability=relaxed', 'Reception, RECEPTION_DURABILITY=relaxed (SQLite synchronous=NORMAL)', {
    RECEPTION_DURABILITY: 'relaxed',
  }),
];
