import { defineConfig } from 'vitest/config';

// The suite runs on the Node.js 24 that npm install puts in node_modules/.bin (npm test finds it first);
// an older Node stops here instead of running every test several times slower.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  throw new Error(`The tests need Node.js 24 or newer; this is ${process.version}. Run them with npm test.`);
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    globalSetup: ['test/helpers/build.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
