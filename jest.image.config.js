/** `npm run test:image`: the Dockerfile's steps run in a clean folder (test/deploy/dockerfile.test.ts),
 * apart from `npm test` because it installs and builds the whole project again (about 10 minutes). */
import base from './jest.config.js';

export default {
  ...base,
  testTimeout: 1_200_000,
  projects: [{ ...base.projects[0], displayName: 'image', testMatch: ['**/test/deploy/dockerfile.test.ts'], testPathIgnorePatterns: [] }],
};
