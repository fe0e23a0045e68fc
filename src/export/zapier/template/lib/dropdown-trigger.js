'use strict';

/**
 * Hidden triggers that fill dynamic dropdowns, one per option source of the manifest. Each
 * reads the connector's option endpoint with `?format=objects` a page at a time and returns
 * `{id, name}` items.
 *
 * Paging (`canPaginate`): Zapier asks for page 0 when the dropdown opens and for page 1, 2, …
 * on "load more" (`bundle.meta.page`). The connector pages with an opaque cursor (the `Link:
 * <…>; rel="next"` header), so each page stores the cursor of the next one with `z.cursor`,
 * Zapier's store for one dropdown's paging, as `{"page": <next page>, "cursor": <cursor or
 * null at the end>}`. A page whose cursor is not stored (the store was unavailable, or
 * Zapier asked out of order) is reached by following the cursors from the first page.
 */

const { isEmpty } = require('./connector');
const { listProblem } = require('./shape');

/** @typedef {import('zapier-platform-core').ZObject} ZObject */
/** @typedef {import('zapier-platform-core').Bundle} Bundle */
/** @typedef {import('zapier-platform-core').HttpResponse} HttpResponse */
/** @typedef {{page: number, cursor: string | null}} PagingState */

/**
 * The `cursor` of the `rel="next"` link of an answer, or null on the last page.
 * @param {HttpResponse} response
 * @returns {string | null}
 */
const nextCursor = (response) => {
  const header = response.getHeader('link') || '';
  for (const part of header.split(',')) {
    const match = /<([^>]*)>\s*;(.*)$/.exec(part.trim());
    if (!match || !/\brel="?next"?/.test(match[2] || '')) continue;
    const cursor = new URL(match[1] || '', 'http://connector.invalid').searchParams.get('cursor');
    if (cursor) return cursor;
  }
  return null;
};

/**
 * What the previous page stored, or null (nothing stored, or no store to ask).
 * @param {ZObject} z
 * @returns {Promise<PagingState | null>}
 */
const readState = async (z) => {
  try {
    const stored = await z.cursor.get();
    if (!stored) return null;
    const state = JSON.parse(stored);
    return state && typeof state.page === 'number' ? { page: state.page, cursor: typeof state.cursor === 'string' ? state.cursor : null } : null;
  } catch {
    return null;
  }
};

/**
 * @param {ZObject} z
 * @param {PagingState} state
 */
const saveState = async (z, state) => {
  try {
    await z.cursor.set(JSON.stringify(state));
  } catch {
    // Without the store, the next page is found by following the cursors from the start.
  }
};

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
      const key = [...param.inputKeys, param.name].find((name) => !isEmpty(inputData[name]));
      const value = key === undefined ? undefined : inputData[key];
      if (isEmpty(value)) throw new z.errors.Error(`${connector.name}: choose a ${param.title} first.`, 'missing_parameter', 400);
      values[param.name] = Array.isArray(value) ? value[0] : value;
    }
    return values;
  };

  /**
   * One page of choices, from the start (no cursor) or from a cursor.
   * @param {ZObject} z
   * @param {string} url
   * @param {string | null} cursor
   */
  const fetchPage = async (z, url, cursor) => {
    /** @type {Record<string, string>} */
    const params = { format: 'objects', limit: String(spec.pageSize) };
    if (cursor) params.cursor = cursor;
    const response = await connector.request(z, { method: 'GET', url, params });
    // `[{label, value}]`; anything else must not show as a dropdown with no choices.
    const problem = listProblem(response.data, ['value', 'label']);
    if (problem) throw connector.shapeError(z, response, problem);
    /** @type {Array<{label: string, value: unknown}>} */
    const options = response.data;
    return { choices: options.map((option) => ({ id: String(option.value), name: option.label })), next: nextCursor(response) };
  };

  /**
   * @param {ZObject} z
   * @param {Bundle} bundle
   */
  const perform = async (z, bundle) => {
    const url = connector.apiUrl(z, bundle, connector.fillPath(spec.path, pathValues(z, bundle.inputData || {}), z));
    const wanted = Number((bundle.meta && bundle.meta.page) || 0);
    const page = Number.isInteger(wanted) && wanted > 0 ? wanted : 0;

    /** @type {string | null} */
    let cursor = null;
    if (page > 0) {
      const state = await readState(z);
      if (state && state.page === page) {
        if (state.cursor === null) return [];
        cursor = state.cursor;
      } else {
        for (let at = 0; at < page; at++) {
          cursor = (await fetchPage(z, url, cursor)).next;
          if (cursor === null) {
            await saveState(z, { page: page + 1, cursor: null });
            return [];
          }
        }
      }
    }
    const { choices, next } = await fetchPage(z, url, cursor);
    await saveState(z, { page: page + 1, cursor: next });
    return choices;
  };

  return {
    key: spec.key,
    noun: spec.noun,
    display: spec.display,
    operation: { perform, canPaginate: true, inputFields: spec.inputFields, outputFields: spec.outputFields },
  };
};

module.exports = { dropdownTrigger, nextCursor };
