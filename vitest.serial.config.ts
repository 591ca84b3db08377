import { defineConfig } from 'vitest/config';

/**
 * The tests that must run alone: they stop and start the machine's
 * PostgreSQL, or start nginx and several servers. `npm test` runs them
 * after the parallel suite (vitest.config.ts), one file at a time.
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
