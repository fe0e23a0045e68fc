import type { Watch } from './watches.js';

interface Waiting {
  watch: Watch;
  /** When its lease ends, as far as this replica knows (the claim's or the last renewal's end). */
  leaseEnd: number;
  /** Settles the promise `push` returned: the poll's new events, or null when it failed or never ran. */
  done(outcome: number | null): void;
}

/**
 * Keys a replica claimed ahead of its free poll slots (docs/triggers.md): one claim takes a
 * slot-round's worth of due keys, and a poll that ends starts the next waiting key at once,
 * without a claim of its own. The keys wait under the lease of their claim, renewed while they
 * wait; a key whose lease may have run out meanwhile (a renewal that found another replica
 * holding it, or a stall that outlasted it) is let go unpolled, so the source is never asked
 * twice for one key's poll: whoever holds it now polls it, or the next claim takes it again.
 */
export class PollQueue {
  private waiting: Waiting[] = [];

  get length(): number {
    return this.waiting.length;
  }

  /** Queues a claimed key, leased until `leaseEnd`; resolves with its poll's outcome once it has run (or been let go). */
  push(watch: Watch, leaseEnd: number): Promise<number | null> {
    return new Promise((resolve) => this.waiting.push({ watch, leaseEnd, done: resolve }));
  }

  /** The next key whose lease holds at `now`; those before it whose lease ended are let go (`letGo`, then settled null). */
  take(now: number, letGo: (watch: Watch) => void): Waiting | undefined {
    for (let next = this.waiting.shift(); next; next = this.waiting.shift()) {
      if (now < next.leaseEnd) return next;
      letGo(next.watch);
      next.done(null);
    }
    return undefined;
  }

  /**
   * A renewal asked for the leases of `asked` and kept those in `kept`, until `until`: the waiting
   * keys it kept hold until then, those it lost (another replica took them) are let go.
   */
  renewed(asked: readonly string[], kept: ReadonlySet<string>, until: number, letGo: (watch: Watch) => void): void {
    const lost = new Set(asked.filter((key) => !kept.has(key)));
    const renewed = new Set(asked.filter((key) => kept.has(key)));
    this.waiting = this.waiting.filter((w) => {
      if (renewed.has(w.watch.key_hash)) w.leaseEnd = Math.max(w.leaseEnd, until);
      if (!lost.has(w.watch.key_hash)) return true;
      letGo(w.watch);
      w.done(null);
      return false;
    });
  }

  /** Every key still waiting, removed from the queue (a stop hands them back). */
  drain(): Waiting[] {
    return this.waiting.splice(0);
  }
}
