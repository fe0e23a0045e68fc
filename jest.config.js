/** ESM all the way: tests run under `node --experimental-vm-modules`, TypeScript is
 * transpiled by ts-jest (type checking is done once by `tsc --noEmit` in `npm test`). */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', diagnostics: false }],
  },
  testTimeout: 20000,
};
