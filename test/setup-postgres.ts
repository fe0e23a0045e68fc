import { afterAll } from '@jest/globals';
import { dropTestSchemas } from './helpers/engine.js';

// The postgres project: every schema a test file made is dropped once the file is done.
afterAll(async () => {
  await dropTestSchemas();
});
