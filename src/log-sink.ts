import type { Writable } from 'node:stream';

export interface LogSinkOptions {
  /** Where lines go: `process.stdout` in the service, a PassThrough in tests. */
  stream: Writable;
  /** Most bytes the stream may hold unwritten; past it, lines are dropped and counted. */
  maxBufferedBytes?: number;
  /** Turns one JSON line into what is written (the pretty format); none = written as is. */
  format?: (line: string) => string;
  /**
   * Lines written in one turn of the event loop go out in one write: the stream is corked at
   * the first and uncorked on the next tick (the process's stdout sink). A poll that records a
   * mass outage logs a line per status change, and each line was a system call of its own
   * (on a pipe, 11 % of the CPU of recording such a poll). Off: every line is written at once.
   */
  coalesce?: boolean;
}

/** A few thousand access lines: enough to ride out a slow reader, small next to the process. */
const defaultMaxBufferedBytes = 512 * 1024;

/**
 * A pino destination that never blocks the process and never hoards lines. Contract:
 * - lines go to `stream` with its ordinary asynchronous `write`, so a log reader that is
 *   stopped (a full pipe) never blocks the event loop, and nothing is written
 *   synchronously at exit: `process.exit` never waits on the reader;
 * - while the stream holds more than `maxBufferedBytes` unwritten, new lines are dropped
 *   and counted (`dropped`); once the backlog is down to half, one warning line says how
 *   many were lost, then lines flow again;
 * - after a stream error (EPIPE: the reader is gone; the stream is then destroyed) every line
 *   is dropped and counted;
 * - `drain(ms)` lets a clean shutdown wait, at most `ms`, for what is still buffered;
 * - with `coalesce`, the lines of one turn of the event loop are one write (uncorked on the next
 *   tick, or at the process's exit if that comes first).
 */
export class LogSink {
  /** Lines dropped since start (reader too slow, stopped or gone). */
  dropped = 0;
  private unreported = 0;
  private readonly stream: Writable;
  private readonly maxBytes: number;
  private readonly format: (line: string) => string;
  private readonly coalesce: boolean;
  /** Corked by this sink until the next tick. */
  private corked = false;

  constructor(options: LogSinkOptions) {
    this.stream = options.stream;
    this.maxBytes = options.maxBufferedBytes ?? defaultMaxBufferedBytes;
    this.format = options.format ?? ((line) => line);
    this.coalesce = options.coalesce ?? false;
    guardErrors(this.stream);
  }

  /** Writes what this sink corked (next tick, or exit). */
  private readonly uncork = (): void => {
    if (!this.corked) return;
    this.corked = false;
    process.off('exit', this.uncork);
    this.stream.uncork();
  };

  private send(text: string): void {
    if (this.coalesce && !this.corked) {
      this.corked = true;
      this.stream.cork();
      process.nextTick(this.uncork);
      process.once('exit', this.uncork);
    }
    this.stream.write(text);
  }

  write(line: string): void {
    const backlog = this.stream.writableLength;
    const limit = this.unreported > 0 ? this.maxBytes / 2 : this.maxBytes;
    if (this.isBroken() || backlog + line.length > limit) {
      this.dropped += 1;
      this.unreported += 1;
      return;
    }
    if (this.unreported > 0) {
      const notice = { level: 40, time: Date.now(), dropped: this.unreported, msg: 'log lines dropped: the log reader was not keeping up' };
      this.unreported = 0;
      this.send(this.format(`${JSON.stringify(notice)}\n`));
    }
    this.send(this.format(line));
  }

  private isBroken(): boolean {
    return this.stream.destroyed || this.stream.errored !== null;
  }

  /** Resolves once everything buffered is written, or after `timeoutMs`, whichever is first. */
  async drain(timeoutMs: number): Promise<void> {
    // Polled: `drain` events fire only after a write was refused, not whenever a backlog empties.
    const until = Date.now() + timeoutMs;
    while (!this.isBroken() && this.stream.writableLength > 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 10).unref());
    }
  }
}

/**
 * Marks a stream whose errors are already handled. A well-known symbol, not a module-level set:
 * each copy of this module (jest loads one per test file) sees the same mark on process.stdout.
 */
const errorsGuarded = Symbol.for('signage-connector.log-sink.errors-guarded');

/**
 * Without an 'error' listener an EPIPE on stdout would be an uncaught exception. One listener
 * per stream, however many sinks write to it: the sinks read the stream's own state
 * (`destroyed`, `errored`), so the listener has nothing to record.
 */
function guardErrors(stream: Writable & { [errorsGuarded]?: true }): void {
  if (stream[errorsGuarded]) return;
  stream[errorsGuarded] = true;
  stream.on('error', () => undefined);
}
