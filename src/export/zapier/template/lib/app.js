'use strict';

/**
 * The Zapier app object from definition.json: custom auth with the connector's key, one
 * hidden dropdown trigger per option source, a REST-hook and a polling trigger per manifest
 * trigger, and a search per manifest operation.
 */

const { createConnector, pick } = require('./connector');
const { dropdownTrigger } = require('./dropdown-trigger');
const { hookTrigger } = require('./hook-trigger');
const { pollingTrigger } = require('./polling-trigger');
const { search } = require('./search');

/** @typedef {import('zapier-platform-core').ZObject} ZObject */
/** @typedef {import('zapier-platform-core').Bundle} Bundle */

/**
 * @param {import('./types').Definition} definition
 * @param {string} platformVersion the zapier-platform-core version the app runs on
 */
const buildApp = (definition, platformVersion) => {
  const connector = createConnector(definition.connector);
  const auth = definition.authentication;

  const triggers = [
    ...definition.optionTriggers.map((spec) => dropdownTrigger(connector, spec)),
    ...definition.hookTriggers.map((spec) => hookTrigger(connector, spec)),
    ...definition.pollingTriggers.map((spec) => pollingTrigger(connector, spec)),
  ];

  return {
    version: definition.version,
    platformVersion,

    authentication: {
      type: /** @type {const} */ ('custom'),
      fields: auth.fields,
      /**
       * Who the key belongs to, asked at the connection's base URL; a rejected key is a
       * 401 with the connector's message.
       * @param {ZObject} z
       * @param {Bundle} bundle
       */
      test: async (z, bundle) => {
        const response = await connector.request(z, {
          method: auth.test.method,
          url: connector.apiUrl(z, bundle, connector.fillPath(auth.test.path, {}, z)),
          params: auth.test.query || {},
        });
        // `{key, account}`: anything else (a page of a proxy, an empty object) is not a connector.
        return connector.objectOf(z, response, [], ['key']);
      },
      /**
       * The connection's name in Zapier; bundle.inputData is what the test returned.
       * @param {ZObject} _z
       * @param {Bundle} bundle
       */
      connectionLabel: (_z, bundle) => {
        for (const path of [auth.connectionLabel, 'key.name']) {
          const label = path ? pick(bundle.inputData, path) : undefined;
          if (label !== undefined && label !== null && label !== '') return String(label);
        }
        return connector.name;
      },
    },

    beforeRequest: [connector.addApiKey],
    afterResponse: [connector.handleErrors],

    triggers: Object.fromEntries(triggers.map((trigger) => [trigger.key, trigger])),

    searches: Object.fromEntries(definition.searches.map((spec) => [spec.key, search(connector, spec)])),

    flags: {
      // Every call goes through z.request, which Zapier logs itself; leave Node's http module alone.
      skipHttpPatch: true,
    },
  };
};

module.exports = { buildApp };
