'use strict';

/**
 * Hidden triggers that fill dynamic dropdowns, one per option source of the manifest. Each
 * reads the connector's option endpoint with `?format=objects` and returns `{id, name}` items.
 */

const { isEmpty } = require('./connector');

/** @typedef {import('zapier-platform-core').ZObject} ZObject */
/** @typedef {import('zapier-platform-core').Bundle} Bundle */

/**
 * @param {import('./connector').Connector} connector
 * @param {import('./types').OptionTriggerSpec} spec
 */
const dropdownTrigger = (connector, spec) => {
  /**
   * The path parameters from the input fields (`{menuId}` ← `menu_id`); a dropdown that
   * depends on another one says which to choose first.
   * @param {ZObject} z
   * @param {Record<string, unknown>} inputData
   */
  const pathValues = (z, inputData) => {
    /** @type {Record<string, unknown>} */
    const values = {};
    for (const param of spec.params) {
      const value = inputData[param.inputKey] !== undefined ? inputData[param.inputKey] : inputData[param.name];
      if (isEmpty(value)) throw new z.errors.Error(`${connector.name}: choose a ${param.title} first.`, 'missing_parameter', 400);
      values[param.name] = Array.isArray(value) ? value[0] : value;
    }
    return values;
  };

  /**
   * @param {ZObject} z
   * @param {Bundle} bundle
   */
  const perform = async (z, bundle) => {
    // The whole list comes with the first page; a dropdown's "load more" gets nothing new.
    if (bundle.meta && bundle.meta.page > 0) return [];
    const url = connector.apiUrl(connector.fillPath(spec.path, pathValues(z, bundle.inputData || {}), z));
    const response = await z.request({ method: 'GET', url, params: { format: 'objects' } });
    /** @type {Array<{label: string, value: unknown}>} */
    const options = Array.isArray(response.data) ? response.data : [];
    return options.map((option) => ({ id: String(option.value), name: option.label }));
  };

  return {
    key: spec.key,
    noun: spec.noun,
    display: spec.display,
    operation: { perform, inputFields: spec.inputFields, outputFields: spec.outputFields },
  };
};

module.exports = { dropdownTrigger };
