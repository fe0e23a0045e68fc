import { expect, test } from '@jest/globals';
import { replicaLogFormat } from '../../src/cluster/output.js';

/**
 * `npm run cluster` reads its replicas' output through pipes, so their own `auto` would pick
 * JSON; the cluster decides for them from its own terminal: readable lines in a terminal.
 */
test('in a terminal the replicas log readable lines; in a pipe, JSON', () => {
  expect(replicaLogFormat(undefined, true)).toBe('pretty');
  expect(replicaLogFormat('auto', true)).toBe('pretty');
  expect(replicaLogFormat(undefined, false)).toBe('json');
  expect(replicaLogFormat('', false)).toBe('json');
});

test('LOG_FORMAT given explicitly wins', () => {
  expect(replicaLogFormat('json', true)).toBe('json');
  expect(replicaLogFormat('pretty', false)).toBe('pretty');
});
