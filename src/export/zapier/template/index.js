'use strict';

// A Zapier app for the connector, written by `npm run export -- zapier`. definition.json is
// generated from the connector manifest; lib/ is the same for every export. Export again
// rather than editing them here.

const zapier = require('zapier-platform-core');
const { buildApp } = require('./lib/app');
const definition = require('./definition.json');

module.exports = buildApp(definition, zapier.version);
