/** One piece of background work the service starts and stops (the poller, the deliverer, …). */
export interface BackgroundPart {
  /** Its name in the shutdown log ("poller", "deliverer"). */
  name: string;
  start(): void;
  /** Stops it; `requestGraceMs` is the requests' grace period, for parts that serve requests too. */
  stop(requestGraceMs: number): Promise<void>;
}

/**
 * Starts every part, and stops them together (the deliverer stops sending while the polls wind
 * down, not after), then runs `afterStop` (what must reach the database before it closes). While
 * stopping, `stillStopping` names the parts not done yet, for the shutdown log (docs/service.md).
 */
export class Lifecycle {
  private readonly stopping = new Set<string>();

  constructor(
    private readonly parts: BackgroundPart[],
    private readonly afterStop: () => Promise<void> = async () => undefined,
  ) {}

  start(): void {
    for (const part of this.parts) part.start();
  }

  async stop(requestGraceMs = 0): Promise<void> {
    await Promise.all(
      this.parts.map(async (part) => {
        this.stopping.add(part.name);
        try {
          await part.stop(requestGraceMs);
        } finally {
          this.stopping.delete(part.name);
        }
      }),
    );
    await this.afterStop();
  }

  stillStopping(): string[] {
    return [...this.stopping];
  }
}

/** A timer that runs `work` every `everyMs` while started; it keeps no process alive. */
export function intervalPart(name: string, everyMs: number, work: () => void): BackgroundPart {
  let timer: NodeJS.Timeout | null = null;
  return {
    name,
    start() {
      timer = setInterval(work, everyMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
