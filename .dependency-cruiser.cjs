/**
 * Layer rules for src/ (docs/architecture.md, "Layers"): each folder (or top-level file) may
 * import only from its own layer's folders below it in this list, never from a layer above.
 * A folder inside another (http/routes inside http) may have a layer of its own.
 * `npm run lint` runs them (`depcruise src`); a new folder must be given a layer here.
 */
const layers = [
  ['catalog', 'time', 'text', 'paths.ts', 'env-file.ts', 'startup-errors.ts', 'log-sink.ts', 'config.ts', 'route-pattern.ts'],
  ['logger.ts'],
  ['db', 'background'],
  ['crypto', 'errors.ts', 'metrics'],
  ['auth', 'cache', 'dataset'],
  ['upstream', 'manifest', 'menus'],
  ['sources', 'health'],
  ['options'],
  ['triggers'],
  ['webhooks'],
  ['services.ts', 'service-types.ts'],
  // http/ declares and mounts routes; openapi/ writes the document from those declarations;
  // http/routes/ (which serves the document at /openapi.json) sits above both.
  ['http'],
  ['openapi'],
  ['http/routes'],
  ['app.ts'],
  ['demo', 'cluster', 'platform-test', 'export'],
  ['main.ts'],
  ['cli'],
];

const pattern = (names) => `^src/(${names.map((n) => n.replace('.', '\\.')).join('|')})(/|$)`;

const layerRules = layers.slice(0, -1).map((names, i) => ({
  name: `layer-${i}-looks-down`,
  comment: `${names.join(', ')} may not import from a layer above it`,
  severity: 'error',
  // A folder nested in a higher layer's folder (http/routes in http) is judged by its own layer.
  from: { path: pattern(names), pathNot: pattern(layers.slice(i + 1).flat()) },
  to: { path: pattern(layers.slice(i + 1).flat()) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-circular',
      comment: 'no import cycle between files',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'every-folder-has-a-layer',
      comment: 'a folder or top-level file of src/ that is in no layer of .dependency-cruiser.cjs',
      severity: 'error',
      from: { path: '^src/', pathNot: pattern(layers.flat()) },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/export/[^/]+/template/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs'] },
  },
};
