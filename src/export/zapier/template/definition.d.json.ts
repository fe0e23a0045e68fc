// Types for the definition.json the exporter writes beside index.js (it does not exist here).
declare const definition: import('./lib/types').Definition;
export = definition;
