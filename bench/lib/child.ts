import { fork, type ChildProcess } from 'node:child_process';

/**
 * Servers under test run in their own process so they do not share an event loop (or, on a
 * 2-core machine, a core) with the load generator. A tiny request/reply protocol over the IPC
 * channel: the child announces `ready` with what it serves, then answers commands.
 */

interface ReadyMessage {
  type: 'ready';
  info: unknown;
}
interface ReplyMessage {
  type: 'reply';
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}
interface CommandMessage {
  type: 'command';
  id: number;
  command: string;
  arg?: unknown;
}

const startTimeoutMs = 30_000;
const commandTimeoutMs = 30_000;
const stopGraceMs = 3_000;
const live = new Set<ChildProcess>();

// Whatever happens to the parent, no server child outlives it.
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export interface ServerChild<Info> {
  info: Info;
  pid: number;
  call<T = unknown>(command: string, arg?: unknown): Promise<T>;
  /** Asks the child to close its servers and exit; kills it if it does not within 3 s. */
  stop(): Promise<void>;
}

/** Forks a compiled bench module (a URL next to the caller) and waits for its `ready`. */
export async function startChild<Info>(module: URL, options: unknown): Promise<ServerChild<Info>> {
  // The child's stdout goes to our stderr: stdout is reserved for the table.
  const child = fork(module, [JSON.stringify(options)], {
    stdio: ['ignore', 2, 2, 'ipc'],
    execArgv: [
      ...(process.env.BENCH_CHILD_PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_CHILD_PROF] : []),
      // A module the child loads first (a profiler's hooks, for instance).
      ...(process.env.BENCH_CHILD_IMPORT ? ['--import', process.env.BENCH_CHILD_IMPORT] : []),
    ],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let nextId = 1;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; timer: NodeJS.Timeout }>();
  const failAll = (err: Error) => {
    for (const p of pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    pending.clear();
  };
  child.once('exit', (code, signal) => failAll(new Error(`bench child exited (${code ?? signal})`)));

  const info = await new Promise<Info>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`bench child ${module.pathname} did not start within ${startTimeoutMs} ms`));
    }, startTimeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`bench child ${module.pathname} exited before ready (${code ?? signal})`));
    });
    child.on('message', (raw) => {
      const msg = raw as ReadyMessage | ReplyMessage;
      if (msg.type === 'ready') {
        clearTimeout(timer);
        resolve(msg.info as Info);
      } else if (msg.type === 'reply') {
        const p = pending.get(msg.id);
        if (!p) return;
        pending.delete(msg.id);
        clearTimeout(p.timer);
        if (msg.ok) p.resolve(msg.result);
        else p.reject(new Error(msg.error));
      }
    });
  });

  return {
    info,
    pid: child.pid!,
    call<T>(command: string, arg?: unknown): Promise<T> {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`bench child did not answer ${command} within ${commandTimeoutMs} ms`));
        }, commandTimeoutMs);
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
        child.send({ type: 'command', id, command, arg } satisfies CommandMessage);
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const timer = setTimeout(() => child.kill('SIGKILL'), stopGraceMs);
      if (child.connected) child.send({ type: 'command', id: 0, command: 'stop' } satisfies CommandMessage);
      else child.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    },
  };
}

export type Handlers = Record<string, (arg: unknown) => unknown>;

/** CPU time of this process in microseconds, for "was the server saturated" figures. */
export function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/**
 * The child side: sets up (reading the options argument), announces ready, answers commands.
 * `stop` runs `close` then exits; losing the parent does the same, so nothing is left behind.
 */
export async function serveChild<Options, Info>(
  setup: (options: Options) => Promise<{ info: Info; handlers?: Handlers; close(): Promise<void> }>,
): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as Options;
  const { info, handlers = {}, close } = await setup(options);
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    const force = setTimeout(() => process.exit(0), stopGraceMs - 500);
    force.unref();
    try {
      await close();
    } finally {
      process.exit(0);
    }
  };
  const builtIn: Handlers = { cpu: () => ({ cpuMicros: cpuMicros(), wallMs: performance.now() }) };
  process.on('message', (raw) => {
    const msg = raw as CommandMessage;
    if (msg.type !== 'command') return;
    if (msg.command === 'stop') {
      void shutdown();
      return;
    }
    const handler = handlers[msg.command] ?? builtIn[msg.command];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown command ${msg.command}`);
        return handler(msg.arg);
      })
      .then(
        (result) => process.send?.({ type: 'reply', id: msg.id, ok: true, result } satisfies ReplyMessage),
        (err: unknown) => process.send?.({ type: 'reply', id: msg.id, ok: false, error: String((err as Error)?.message ?? err) } satisfies ReplyMessage),
      );
  });
  process.on('disconnect', () => void shutdown());
  process.send?.({ type: 'ready', info } satisfies ReadyMessage);
}
