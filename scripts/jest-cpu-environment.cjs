// Where the suite's CPU goes, per test file: Jest's node environment that, when the file ends,
// appends one JSON line to $JEST_CPU_LOG (default /tmp/jest-cpu.jsonl): the file, its project,
// its wall time, and the CPU seconds of the worker while it ran (`self`: loading its modules
// and running its tests) and of the child processes it waited for (`children`: CLIs, servers,
// the build). Linux only (/proc/self/stat). Used by scripts/jest-cpu.config.js:
//   JEST_CPU_LOG=/tmp/cpu.jsonl npm test -- -c scripts/jest-cpu.config.js
// CommonJS: Jest loads a test environment given by path with require().
const { appendFileSync, readFileSync } = require('node:fs');
const { TestEnvironment } = require('jest-environment-node');

/** Clock ticks per second of /proc's times (USER_HZ, 100 on Linux). */
const hz = 100;

/** CPU ticks of this process and of its waited-for children. */
function ticks() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { self: Number(fields[11]) + Number(fields[12]), children: Number(fields[13]) + Number(fields[14]) };
}

class CpuEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
    this.project = config.projectConfig.displayName?.name ?? '';
    this.startedAt = Date.now();
    this.startTicks = ticks();
  }

  async teardown() {
    await super.teardown();
    const now = ticks();
    const line = {
      file: this.testPath,
      project: this.project,
      pid: process.pid,
      start: this.startedAt,
      wallMs: Date.now() - this.startedAt,
      self: (now.self - this.startTicks.self) / hz,
      children: (now.children - this.startTicks.children) / hz,
    };
    appendFileSync(process.env.JEST_CPU_LOG || '/tmp/jest-cpu.jsonl', `${JSON.stringify(line)}\n`);
  }
}

module.exports = CpuEnvironment;
