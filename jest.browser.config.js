/** `npm run test:browser` (docs/console.md): the console in a real Chromium against a live connector.
 * Separate from `npm test`: it needs Debian's chromium and builds the console first. One file at a
 * time: each starts its own connector and browser, and the machine has two cores. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  roots: ['<rootDir>/test/browser'],
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', diagnostics: false }],
  },
  maxWorkers: 1,
  verbose: true,
  testTimeout: 120000,
};
