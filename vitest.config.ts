import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // most of a test's time is spent waiting on git, builds and servers, not on a core: three
    // files at once on two cores take a third of the time one at a time does
    maxWorkers: 3,
  },
});
