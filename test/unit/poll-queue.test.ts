import { describe, expect, test } from '@jest/globals';
import { PollQueue } from '../../src/triggers/poll-queue.js';
import type { Watch } from '../../src/triggers/watches.js';

const watch = (key: string): Watch => ({
  key_hash: key,
  user_id: null,
  key_cipher: null,
  baseline_at: null,
  paused_reason: null,
  snapshot_digest: null,
  next_poll_at: 0,
});

describe('PollQueue: claimed keys wait under their lease', () => {
  test('take skips (and settles null) the keys whose lease ended; a renewal moves the end of those it kept and lets go those it lost', async () => {
    const queue = new PollQueue();
    const outcomes = ['a', 'b', 'c', 'd'].map((key) => queue.push(watch(key), 1_000));
    const letGo: string[] = [];
    const drop = (w: Watch) => letGo.push(w.key_hash);

    // A renewal at 900 kept a and c; it lost b (another replica holds it); d was claimed after it asked.
    queue.renewed(['a', 'b', 'c'], new Set(['a', 'c']), 2_000, drop);
    expect(letGo).toEqual(['b']);
    expect(await outcomes[1]).toBeNull();
    expect(queue.length).toBe(3);

    expect(queue.take(1_500, drop)?.watch.key_hash).toBe('a');
    // d's lease (its claim's) ended at 1,000: let go; c's was renewed to 2,000.
    queue.push(watch('e'), 1_400);
    expect(queue.take(1_500, drop)?.watch.key_hash).toBe('c');
    expect(queue.take(1_500, drop)).toBeUndefined();
    expect(letGo).toEqual(['b', 'd', 'e']);
    expect(await outcomes[3]).toBeNull();
    expect(queue.length).toBe(0);
  });
});
