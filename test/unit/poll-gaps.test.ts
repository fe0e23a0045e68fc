import { describe, expect, test } from '@jest/globals';
import { analysePolls } from '../../bench/lib/poll-gaps.js';

describe('analysePolls (bench/lib/poll-gaps.ts)', () => {
  const window = { from: 10_000, to: 14_000 };

  test('counts keys per whole interval, polls in the window, and keys polled', () => {
    const a = analysePolls([[9_500, 10_500, 11_500, 12_500, 13_500], [10_900, 12_900], []], window, 1000);
    expect(a.polls).toBe(6);
    expect(a.keysPolled).toBe(2);
    expect(a.keysPerInterval).toEqual([2, 1, 2, 1]);
  });

  test('a poll less than 0.9 × interval after the previous one of the same key is a short gap; the one before the window counts', () => {
    const a = analysePolls([[9_900, 10_700, 11_700, 11_800]], window, 1000);
    expect(a.shortGaps).toEqual([
      { key: 0, at: 10_700, ms: 800 },
      { key: 0, at: 11_800, ms: 100 },
    ]);
    expect(analysePolls([[10_000, 10_900]], window, 1000).shortGaps).toEqual([]); // exactly 0.9 × interval
  });

  test('with the calls beside the polls, two attempts of one call (a retry, one X-Request-Id) are no short gap; a second call is, whoever made it', () => {
    const polls = [[10_000, 10_400, 10_800, 11_900, 12_300]];
    const ids = [['a', 'a', 'b', 'c', 'd']];
    const a = analysePolls(polls, window, 1000, 0.5, ids);
    expect(a.retries).toBe(1);
    // 'a' retried at 10,400: one poll; 'b' 400 ms after it is a second poll, and so is 'd' after 'c'.
    expect(a.shortGaps).toEqual([
      { key: 0, at: 10_800, ms: 400 },
      { key: 0, at: 12_300, ms: 400 },
    ]);
    // Still a gap: the key went that long without another request.
    expect(a.gaps.map((g) => g.ms)).toContain(1_100);
    // Without the calls, every request is a poll.
    expect(analysePolls(polls, window, 1000, 0.5).shortGaps).toHaveLength(3);
  });

  test('gaps are sorted longest first, polls after the window are ignored, and a key left waiting at the end has an open gap', () => {
    const a = analysePolls(
      [
        [10_000, 11_000, 13_500, 15_000],
        [10_100, 11_100],
      ],
      window,
      1000,
    );
    expect(a.gaps[0]).toEqual({ key: 1, at: 14_000, ms: 2_900, open: true });
    expect(a.gaps[1]).toEqual({ key: 0, at: 13_500, ms: 2_500 });
    expect(a.gaps.map((g) => g.ms)).toEqual([2_900, 2_500, 1_000, 1_000]);
  });
});
