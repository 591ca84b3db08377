import { defineConfig } from 'vitest/config';

/**
 * The tests that run alone, one file at a time, after the parallel suite
 * (vitest.config.ts): heavy loads under SIGKILL, several servers behind
 * nginx, a private PostgreSQL server stopped and started mid-load, and the
 * SQLite checkpoint thread keeping up with a stream of appends. A
 * busy machine would turn their timings into noise; none of them touches
 * the machine's shared PostgreSQL beyond its own schemas.
 */
export default defineConfig({
  test: {
    include: ['test/serial/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 90_000,
    pool: 'forks',
  },
});
