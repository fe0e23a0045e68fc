// Jest's resolver for the suite (jest.config.js): the TypeScript sources import each other as
// `./name.js`, as Node.js needs once compiled; here `./name.js` is `./name.ts` when that exists.
// A moduleNameMapper did this before (`./name.js` -> `./name`), but Jest does not cache what a
// mapper resolves: every import of every module, in every test file, went through the whole
// resolution again (stat calls, package.json lookups), twice (once more to look for a mock).
// Through a resolver, each answer is cached per folder for the worker's life.
// CommonJS: Jest loads its resolver with require().
const { existsSync } = require('node:fs');
const { resolve } = require('node:path');

module.exports = (request, options) => {
  if (request.endsWith('.js') && request.startsWith('.') && !options.basedir.includes('/node_modules/')) {
    const source = resolve(options.basedir, `${request.slice(0, -3)}.ts`);
    if (existsSync(source)) return source;
  }
  return options.defaultResolver(request, options);
};
