/** ESM all the way: tests run under `node --experimental-vm-modules`, TypeScript is
 * transpiled file by file by Oxc (scripts/jest-transform.mjs; type checking is done once by
 * `tsc --noEmit` in `npm test`). ts-jest did the same with TypeScript's own transpileModule
 * (tsconfig.json has isolatedModules), at about 30 times the cost: 8 s of one core for the
 * repository's 468 .ts files against 0.3 s. Jest caches transforms, but a fresh clone has no
 * cache and each of the workers compiles the same modules for its first files. `npm test` in
 * a fresh state (no jest cache, no dist/), back to back on 2026-11-28 with the machine shared
 * (load average 5-7): 776 s of CPU with ts-jest (641 user + 135 system; 8 min 26 s), 655 s with
 * Oxc (537 + 119; 8 min 14 s). The suite is CPU-bound: on this machine's 2 cores its CPU time
 * halved is its floor, so on a quiet machine about 5.5 minutes instead of 6.5. Once the cache
 * is warm both cost the same.
 *
 * What a test file costs besides its tests: resolving and compiling the modules it loads, since
 * each file has a registry of its own. `./name.js` is resolved by scripts/jest-resolver.cjs,
 * whose answers Jest caches for the worker (a moduleNameMapper's it does not), and each source
 * is parsed once per worker, later files compiling it from V8's code cache
 * (scripts/jest-runtime.cjs). Together about 0.2 s of CPU less per file (1.30 -> 1.09 s for the
 * files without child processes); the workers' own CPU went from 378 to 336 s, `npm test` from
 * 656 s (566 user + 90 system) to 616-634 s in a fresh state (two runs; load average 4-6 from
 * other work), the same 2,608 tests passing.
 * The rest of a file's cost is its tests; the spawned processes (the CLIs, servers, replicas,
 * the build) take another 160 s, each loading the compiled app (0.5-1 s of CPU).
 *
 * Two projects: every suite on SQLite (the default engine), and the integration suites
 * that touch storage once more on PostgreSQL. The multi-process replica suites (test/replicas)
 * run their replicas on PostgreSQL themselves. */
const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  roots: ['<rootDir>/test'],
  resolver: '<rootDir>/scripts/jest-resolver.cjs',
  runtime: '<rootDir>/scripts/jest-runtime.cjs',
  transform: {
    '^.+\\.ts$': '<rootDir>/scripts/jest-transform.mjs',
  },
};

export default {
  testTimeout: 20000,
  // Many suites wait on sockets, timers and child processes: with two workers the suite kept
  // 1.4 of this machine's 2 cores busy on average (7 min 48 s in a fresh clone), with three
  // 1.6 (6 min 29 s).
  maxWorkers: 3,
  // PostgreSQL: the server at TEST_DATABASE_URL; when it is unset, globalSetup starts an
  // embedded one for the run (test/helpers/postgres.ts) and globalTeardown stops it.
  globalSetup: '<rootDir>/test/global-setup.mjs',
  globalTeardown: '<rootDir>/test/global-teardown.mjs',
  projects: [
    // The Dockerfile's steps run as a script (test/deploy/dockerfile.test.ts: an `npm ci` and a
    // build in a clean folder, about 10 minutes) have a command of their own, `npm run test:image`,
    // which .ci/run runs after the suite. test/browser is `npm run test:browser` (jest.browser.config.js).
    {
      ...common,
      displayName: 'sqlite',
      setupFilesAfterEnv: ['<rootDir>/test/setup-apps.ts'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/test/deploy/dockerfile\\.test\\.ts$', '/test/browser/'],
    },
    {
      ...common,
      displayName: 'postgres',
      testMatch: ['**/integration/**/*.test.ts'],
      // Suites whose subject is not storage: processes started on SQLite files (the CLIs, the
      // demo, start-up, logging, durability across restarts), documents, upstream mode over a big
      // listing, and HTTP behaviour that reads and writes nothing of its own (methods, proxies and
      // forwarded addresses, public URLs, request log fields, the served manifest and console page,
      // declared bounds, upstream encodings and body limits, the first metrics scrape, request
      // shapes, manifest sources, the example dataset). Replicas on PostgreSQL are test/replicas/.
      testPathIgnorePatterns: [
        '/(cli|demo|durability|startup|log-pipe|log-hygiene|zapier-export|n8n-export|make-export|activepieces-export|pipedream-export|openapi-lint|docs|readme-endpoints|http-parser-errors|postgres-helper|upstream-big-options|shutdown)\\.test\\.ts$',
        '/(method-not-allowed|forwarded-for|trust-proxy|public-base-url|request-log-reason|served-manifest|console-page|openapi-agreement|upstream-encoding|upstream-body-limit|metrics-first-scrape|request-shapes|manifest-sources|dataset-example)\\.test\\.ts$',
      ],
      setupFiles: ['<rootDir>/test/env-postgres.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/setup-apps.ts', '<rootDir>/test/setup-postgres.ts'],
    },
  ],
};
