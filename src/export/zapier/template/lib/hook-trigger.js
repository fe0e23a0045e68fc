'use strict';

/**
 * A REST-hook trigger: turning the Zap on subscribes Zapier's URL with the connector
 * (`POST /v1/hooks`), which then POSTs one signed delivery per event; turning it off
 * unsubscribes.
 */

const { isEmpty, toList } = require('./connector');
const { fetchEvents, sampleEvents } = require('./events');
const { signatureProblem } = require('./signature');

/** The app checks the signature, not the delivery's age (the timestamp is signed all the same). */
const anyAge = { pastSeconds: Infinity, futureSeconds: Infinity };

/** @typedef {import('zapier-platform-core').ZObject} ZObject */
/** @typedef {import('zapier-platform-core').Bundle} Bundle */
/** @typedef {{id?: string, secret?: string}} Hook what subscribing returned; Zapier keeps it as bundle.subscribeData */

/**
 * @param {import('./connector').Connector} connector
 * @param {import('./types').HookTriggerSpec} spec
 */
const hookTrigger = (connector, spec) => {
  /**
   * @param {ZObject} z
   * @param {Bundle} bundle
   */
  const performSubscribe = async (z, bundle) => {
    const inputData = bundle.inputData || {};
    /** @type {Record<string, unknown>} */
    const body = { ...spec.subscribe.body, target_url: bundle.targetUrl };
    for (const input of spec.inputs) {
      if (!input.hookField) continue;
      const value = input.list ? toList(inputData[input.key]) : inputData[input.key];
      if (!isEmpty(value)) body[input.hookField] = value;
    }
    const response = await connector.request(z, {
      method: spec.subscribe.method,
      url: connector.apiUrl(z, bundle, connector.fillPath(spec.subscribe.path, inputData, z)),
      params: spec.subscribe.query || {},
      body,
    });
    // The hook's id (to unsubscribe) and secret (to verify deliveries): without them the Zap
    // could neither check its deliveries nor remove the hook.
    return connector.objectOf(z, response, ['id', 'secret']);
  };

  /**
   * @param {ZObject} z
   * @param {Bundle} bundle
   */
  const performUnsubscribe = async (z, bundle) => {
    /** @type {Hook} */
    const hook = bundle.subscribeData || {};
    const response = await connector.request(z, {
      method: spec.unsubscribe.method,
      url: connector.apiUrl(z, bundle, connector.fillPath(spec.unsubscribe.path, hook, z)),
      skipThrowForStatus: true,
    });
    // A hook that is already gone is what unsubscribing wants (Zapier may retry).
    if (response.status >= 400 && response.status !== 404 && response.status !== 410) throw connector.errorFor(response, z);
    return { id: hook.id, unsubscribed: true };
  };

  /**
   * One delivery → its event. When Zapier hands over the raw request, the signature is
   * checked with the hook's secret and the event is taken from the exact bytes verified.
   * @param {ZObject} z
   * @param {Bundle} bundle
   */
  const perform = async (z, bundle) => {
    let body = bundle.cleanedRequest;
    /** @type {Hook} */
    const hook = bundle.subscribeData || {};
    const raw = bundle.rawRequest;
    if (hook.secret && raw && (raw.content !== undefined || raw.headers !== undefined)) {
      const problem = signatureProblem(String(hook.secret), raw.headers, raw.content, anyAge);
      if (problem) throw new z.errors.Error(`${connector.name}: ignored a webhook delivery: ${problem}.`, 'invalid_signature', 401);
      try {
        body = JSON.parse(String(raw.content));
      } catch {
        throw new z.errors.Error(`${connector.name}: ignored a webhook delivery that is not JSON.`, 'invalid_body', 400);
      }
    }
    // A delivery is {type, timestamp, data: event}; a bare event is accepted too.
    const event = body && typeof body.data === 'object' && body.data !== null ? body.data : body;
    if (!event || typeof event !== 'object' || !event.id || !spec.eventTypes.includes(event.type)) return [];
    return [event];
  };

  /**
   * "Load samples" in the Zap editor: recent events, else samples from the user's own devices.
   * @param {ZObject} z
   * @param {Bundle} bundle
   */
  const performList = async (z, bundle) => {
    const events = await fetchEvents(connector, z, bundle, spec.list, spec.inputs);
    return events.length > 0 ? events : sampleEvents(connector, z, bundle, spec);
  };

  return {
    key: spec.key,
    noun: spec.noun,
    display: spec.display,
    operation: {
      type: /** @type {const} */ ('hook'),
      inputFields: spec.inputFields,
      performSubscribe,
      performUnsubscribe,
      perform,
      performList,
      outputFields: spec.outputFields,
      sample: spec.sample,
    },
  };
};

module.exports = { hookTrigger };
