import type { Watch } from './watches.js';

interface Waiting {
  watch: Watch;
  /** Settles the promise `push` returned: the poll's new events, or null when it failed or never ran. */
  done(outcome: number | null): void;
}

/**
 * Keys a replica claimed ahead of its free poll slots (docs/triggers.md): one claim takes a
 * slot-round's worth of due keys, and a poll that ends starts the next waiting key at once,
 * without a claim of its own. The keys wait under the lease of their claim.
 */
export class PollQueue {
  private readonly waiting: Waiting[] = [];

  get length(): number {
    return this.waiting.length;
  }

  /** Queues a claimed key; resolves with its poll's outcome once it has run (or been handed back). */
  push(watch: Watch): Promise<number | null> {
    return new Promise((resolve) => this.waiting.push({ watch, done: resolve }));
  }

  take(): Waiting | undefined {
    return this.waiting.shift();
  }

  /** Every key still waiting, removed from the queue (a stop hands them back). */
  drain(): Waiting[] {
    return this.waiting.splice(0);
  }
}
