import { afterAll, afterEach, beforeEach } from '@jest/globals';
import { closeFinishedTests, endTest, startTest } from './helpers/test-scope.js';

// Every project: the apps a test opened (in its body or a beforeEach) are closed before the
// next test starts (test/helpers/test-scope.ts); apps opened in a beforeAll live until the file
// ends, and whatever is left then is closed.
beforeEach(startTest);
afterEach(endTest);
afterAll(closeFinishedTests);
