// The suite's configuration with scripts/jest-cpu-environment.cjs as every project's test
// environment, to see the CPU and wall time of each test file (see that file).
import { fileURLToPath } from 'node:url';
import config from '../jest.config.js';

const rootDir = fileURLToPath(new URL('..', import.meta.url));

export default {
  ...config,
  rootDir,
  projects: config.projects.map((project) => ({ ...project, rootDir, testEnvironment: '<rootDir>/scripts/jest-cpu-environment.cjs' })),
};
