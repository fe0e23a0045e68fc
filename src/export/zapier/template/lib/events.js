'use strict';

/**
 * Reading device-status events from the connector, shared by the REST-hook and polling
 * triggers: the query a trigger's inputs make, the events themselves, and samples.
 */

const { isEmpty, toList } = require('./connector');
const { listProblem } = require('./shape');

/** @typedef {import('zapier-platform-core').ZObject} ZObject */
/** @typedef {import('zapier-platform-core').Bundle} Bundle */
/** @typedef {import('./types').Endpoint} Endpoint */
/** @typedef {import('./types').EventInput} EventInput */
/** @typedef {Record<string, unknown> & {id?: unknown, type?: unknown}} Event */

/**
 * An endpoint's fixed query plus the inputs that map to a query parameter (lists joined by commas).
 * @param {Endpoint} endpoint
 * @param {EventInput[]} inputs
 * @param {Record<string, unknown>} inputData
 * @returns {Record<string, string>}
 */
const eventQuery = (endpoint, inputs, inputData) => {
  /** @type {Record<string, string>} */
  const params = { ...endpoint.query };
  for (const input of inputs) {
    if (!input.pollingParam) continue;
    const value = input.list ? toList(inputData[input.key]).join(',') : inputData[input.key];
    if (!isEmpty(value)) params[input.pollingParam] = String(value);
  }
  return params;
};

/**
 * The events an endpoint returns for the trigger's inputs, as the connector orders them.
 * @param {import('./connector').Connector} connector
 * @param {ZObject} z
 * @param {Bundle} bundle
 * @param {Endpoint} endpoint
 * @param {EventInput[]} inputs
 * @returns {Promise<Event[]>}
 */
const fetchEvents = async (connector, z, bundle, endpoint, inputs) => {
  const inputData = bundle.inputData || {};
  const response = await connector.request(z, {
    method: endpoint.method,
    url: connector.apiUrl(z, bundle, connector.fillPath(endpoint.path, inputData, z)),
    params: eventQuery(endpoint, inputs, inputData),
  });
  // A list of events, each with its id (Zapier dedupes on it) and type.
  const problem = listProblem(response.data, ['id', 'type']);
  if (problem) throw connector.shapeError(z, response, problem);
  return response.data;
};

/**
 * Sample events built from the user's own devices (for the Zap editor), of the trigger's types only.
 * @param {import('./connector').Connector} connector
 * @param {ZObject} z
 * @param {Bundle} bundle
 * @param {{samples: Endpoint, eventTypes: string[]}} spec
 */
const sampleEvents = async (connector, z, bundle, spec) => {
  const events = await fetchEvents(connector, z, bundle, spec.samples, []);
  return events.filter((event) => event && spec.eventTypes.includes(String(event.type)));
};

module.exports = { eventQuery, fetchEvents, sampleEvents };
