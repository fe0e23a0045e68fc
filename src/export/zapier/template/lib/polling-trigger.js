'use strict';

/**
 * A polling trigger: Zapier calls it every few minutes and dedupes the items on `id`, which
 * the connector derives from device, type and heartbeat (the same transition always has the
 * same id).
 */

const { fetchEvents, sampleEvents } = require('./events');

/** @typedef {import('zapier-platform-core').ZObject} ZObject */
/** @typedef {import('zapier-platform-core').Bundle} Bundle */

/**
 * @param {import('./connector').Connector} connector
 * @param {import('./types').PollingTriggerSpec} spec
 */
const pollingTrigger = (connector, spec) => {
  /**
   * Newest events first.
   * @param {ZObject} z
   * @param {Bundle} bundle
   */
  const perform = async (z, bundle) => {
    const events = await fetchEvents(connector, z, bundle, spec.polling, spec.inputs);
    // A key's first poll only records a baseline, so the Zap editor's test gets samples instead.
    if (events.length === 0 && bundle.meta && bundle.meta.isLoadingSample) return sampleEvents(connector, z, bundle, spec);
    return events;
  };

  return {
    key: spec.key,
    noun: spec.noun,
    display: spec.display,
    operation: {
      type: /** @type {const} */ ('polling'),
      inputFields: spec.inputFields,
      perform,
      outputFields: spec.outputFields,
      sample: spec.sample,
    },
  };
};

module.exports = { pollingTrigger };
