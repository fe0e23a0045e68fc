import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, test } from 'node:test';
import Ajv from 'ajv';
import { evaluate, expressions } from './iml.js';
import { appDir } from './make.js';

// The files against Make's documented format, as the Make Apps Editor extension checks them:
// its JSON schemas (test/make-schemas/) for each code type, makecomapp.json's own schema, and
// the references between components that Make resolves when the app is deployed.

const schemaDir = join(appDir, 'test', 'make-schemas');
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, unicodeRegExp: false });
for (const file of readdirSync(schemaDir).filter((name) => name.endsWith('.json'))) {
  ajv.addSchema(JSON.parse(readFileSync(join(schemaDir, file), 'utf8')), file);
}

/** Which schema the extension applies to each code of makecomapp.json. */
const schemaOf = {
  base: 'base.json',
  groups: 'groups.json',
  communication: 'api.json',
  attach: 'api.json',
  detach: 'api.json',
  params: 'parameters.json',
  staticParams: 'parameters.json',
  mappableParams: 'parameters.json',
  interface: 'parameters.json',
  samples: 'samples.json',
  epoch: 'epoch.json',
};

/** The code files each kind of component must have. */
const requiredCodes = {
  connection: ['communication', 'params'],
  rpc: ['communication', 'params'],
  webhook: ['communication', 'params', 'attach', 'detach'],
  module: ['communication', 'staticParams', 'mappableParams', 'interface', 'samples'],
};

/** Make's naming rules for the names the extension creates remote components with. */
const nameRule = {
  module: /^[a-zA-Z][0-9a-zA-Z]{2,63}$/,
  rpc: /^[a-zA-Z][0-9a-zA-Z]{2,63}$/,
  connection: /^[a-zA-Z][0-9a-zA-Z-]{1,33}[0-9a-zA-Z]$/,
  webhook: /^[a-zA-Z][0-9a-zA-Z-]{1,33}[0-9a-zA-Z]$/,
};

const read = (path) => readFileSync(join(appDir, path), 'utf8');
const app = JSON.parse(read('makecomapp.json'));

const validate = (schema, value, where) => {
  const check = ajv.getSchema(schema);
  assert.ok(check, `no schema ${schema}`);
  assert.ok(check(value), `${where} does not match ${schema}: ${ajv.errorsText(check.errors, { separator: '\n  ' })}`);
};

/** Every code file: [code type, path, component kind or 'app', component name]. */
const codes = [
  ...Object.entries(app.generalCodeFiles).filter(([, path]) => path).map(([code, path]) => [code, path, 'app', '']),
  ...Object.entries(app.components).flatMap(([kind, components]) =>
    Object.entries(components).flatMap(([name, metadata]) => Object.entries(metadata.codeFiles).filter(([, path]) => path).map(([code, path]) => [code, path, kind, name])),
  ),
];

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [relative(appDir, path).split(sep).join('/')];
  });
}

/** Every `rpc://name` a parameter list refers to, nested options included. */
function rpcRefs(value) {
  if (typeof value === 'string') return value.startsWith('rpc://') ? [value.slice('rpc://'.length).split('?')[0]] : [];
  if (Array.isArray(value)) return value.flatMap(rpcRefs);
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([key, entry]) => (key === 'url' && value.label && typeof entry === 'string' ? [entry] : rpcRefs(entry)));
  return [];
}

describe('makecomapp.json', () => {
  test('matches the extension schema and lists no origin yet (the deploy adds one)', () => {
    validate('makecomapp.schema.json', app, 'makecomapp.json');
    assert.deepEqual(app.origins, []);
  });

  test('every component has the code files of its kind and a name Make accepts', () => {
    for (const [kind, components] of Object.entries(app.components)) {
      for (const [name, metadata] of Object.entries(components)) {
        if (nameRule[kind]) assert.match(name, nameRule[kind], `${kind} ${name}`);
        for (const code of requiredCodes[kind] ?? []) assert.ok(metadata.codeFiles[code], `${kind} ${name} has no ${code}`);
        if (metadata.moduleType === 'trigger') assert.ok(metadata.codeFiles.epoch, `${name} has no epoch`);
      }
    }
  });

  test('every code file it names exists, and every code file in the folder is named', () => {
    const listed = new Set(codes.map(([, path]) => path));
    const onDisk = walk(appDir).filter((path) => path.endsWith('.iml.json') || path === 'modules/groups.json');
    assert.deepEqual([...onDisk].sort(), [...listed].filter((path) => path.endsWith('.json')).sort());
    for (const path of listed) assert.doesNotThrow(() => read(path), path);
  });
});

describe('code files', () => {
  for (const [code, path] of codes) {
    if (!path.endsWith('.json')) continue;
    test(`${path} is JSON matching the ${code} schema`, () => {
      const value = JSON.parse(read(path));
      validate(schemaOf[code], value, path);
    });
  }

  test('every IML expression is one the test harness can evaluate', () => {
    for (const [, path] of codes) {
      if (!path.endsWith('.json')) continue;
      for (const source of expressions(JSON.parse(read(path)))) assert.doesNotThrow(() => evaluate(`{{${source}}}`, {}), `${path}: {{${source}}}`);
    }
  });
});

describe('references', () => {
  const { connection, webhook, module, rpc } = app.components;

  test('modules, RPCs and webhooks use the app connection; instant triggers their webhook', () => {
    for (const [name, metadata] of Object.entries({ ...module, ...rpc, ...webhook })) {
      assert.ok(connection[metadata.connection], `${name} uses connection ${metadata.connection}`);
    }
    for (const [name, metadata] of Object.entries(module)) {
      if (metadata.moduleType === 'instant_trigger') assert.ok(webhook[metadata.webhook], `${name} uses webhook ${metadata.webhook}`);
      else assert.equal(metadata.webhook, undefined, name);
    }
    const used = new Set(Object.values(module).map((metadata) => metadata.webhook).filter(Boolean));
    assert.deepEqual([...used].sort(), Object.keys(webhook).sort(), 'each webhook belongs to an instant trigger');
  });

  test('every rpc:// option names an RPC of the app, and every RPC is used', () => {
    const used = new Set();
    for (const [, path] of codes.filter(([code]) => /params|Params$/.test(code))) {
      for (const name of rpcRefs(JSON.parse(read(path)))) {
        assert.ok(rpc[name], `${path} refers to rpc://${name}`);
        used.add(name);
      }
    }
    assert.deepEqual([...used].sort(), Object.keys(rpc).sort());
  });

  test('the module groups list every module once', () => {
    const grouped = JSON.parse(read(app.generalCodeFiles.groups)).flatMap((group) => group.modules);
    assert.deepEqual([...grouped].sort(), Object.keys(module).sort());
  });
});
