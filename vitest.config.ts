import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // test/serial restarts PostgreSQL: vitest.serial.config.ts runs it alone, after this suite.
    exclude: [...configDefaults.exclude, 'test/serial/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
