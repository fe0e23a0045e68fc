// Jest's runtime for the suite (jest.config.js): jest-runtime, with V8's code cache kept per
// worker process. Every test file gets a fresh module registry, so each file compiles again
// every module it loads (express, zod, kysely, the connector's own modules, Jest's matchers
// and snapshot code). V8 reuses its compilation of an identical source, but not for code that
// can `import()` (each script carries its own callback), which all of Jest's does. Here the
// second compile of a source in a worker is handed the first one's code cache (vm's
// `cachedData`): the same code, parsed once per worker instead of once per test file.
// A script's cache is made once the first file has run it, so it holds the functions compiled
// lazily too; an ES module's only before it runs (Node.js refuses it after).
// V8 refuses a cache made under other flags (a test may set one, as --expose-gc): the source is
// then compiled anew, and its cache made again. Not for a source that calls `import()`: on
// Node.js 20, code compiled from a cache has lost its import callback (`import()` then fails
// with "A dynamic import callback was not specified").
// CommonJS: Jest loads its runtime with require().
const vm = require('node:vm');
const Runtime = require('jest-runtime').default;

/** By file name: the source first compiled, that compilation (until its cache is made), its cache. */
const compiled = new Map();

/** The code cache for this source of this file, when it was compiled before in this process. */
function cachedDataFor(name, source) {
  const entry = compiled.get(name);
  if (entry?.source !== source) return undefined;
  if (entry.first) {
    entry.data = entry.first.createCachedData();
    entry.first = undefined;
  }
  return entry.data;
}

/** Whether a source may be compiled from a cache: a string, with a file name, and no `import()`. */
function cacheable(name, source) {
  return typeof name === 'string' && typeof source === 'string' && !/\bimport\s*\(/.test(source);
}

function remember(name, source, first, data) {
  compiled.set(name, { source, first, data });
}

const { Script: NodeScript, SourceTextModule: NodeSourceTextModule } = vm;

/** vm.Script, compiled from the cache when it can be. */
function Script(code, options) {
  const name = options?.filename;
  const cache = cacheable(name, code);
  const cachedData = cache ? cachedDataFor(name, code) : undefined;
  const script = new NodeScript(code, cachedData ? { ...options, cachedData } : options);
  if (cache && (!cachedData || script.cachedDataRejected)) remember(name, code, script, undefined);
  return script;
}
Script.prototype = NodeScript.prototype;

/** vm.SourceTextModule, compiled from the cache when it can be (it throws when V8 refuses the cache). */
function SourceTextModule(code, options) {
  const name = options?.identifier;
  const cache = cacheable(name, code);
  const cachedData = cache ? cachedDataFor(name, code) : undefined;
  if (cachedData) {
    try {
      return new NodeSourceTextModule(code, { ...options, cachedData });
    } catch (err) {
      if (err?.code !== 'ERR_VM_MODULE_CACHED_DATA_REJECTED') throw err;
    }
  }
  const module = new NodeSourceTextModule(code, options);
  if (cache) remember(name, code, undefined, module.createCachedData());
  return module;
}
SourceTextModule.prototype = NodeSourceTextModule.prototype;

vm.Script = Script;
vm.SourceTextModule = SourceTextModule;

module.exports = Runtime;
