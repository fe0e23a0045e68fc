'use strict';

/**
 * How the app talks to the connector: where it is, how the key is sent, and how a connector
 * error becomes a Zapier error. One instance per app, built from definition.json's `connector`.
 */

/** @typedef {import('zapier-platform-core').ZObject} ZObject */
/** @typedef {import('zapier-platform-core').Bundle} Bundle */
/** @typedef {import('zapier-platform-core').HttpRequestOptions} HttpRequestOptions */
/** @typedef {import('zapier-platform-core').HttpResponse} HttpResponse */

const { objectProblem } = require('./shape');

/**
 * How long a request may wait for the connector's whole answer: 30 s, or
 * CONNECTOR_TIMEOUT_MS (the app's tests shorten it to try a connector that never answers).
 */
const timeoutMs = () => {
  const value = Number(process.env.CONNECTOR_TIMEOUT_MS);
  return Number.isInteger(value) && value > 0 ? value : 30_000;
};

/**
 * A dotted path into an object (`account.name`); undefined when any step is missing.
 * @param {unknown} object
 * @param {string} path
 * @returns {unknown}
 */
const pick = (object, path) =>
  path.split('.').reduce(
    /** @param {unknown} value */
    (value, part) => (value !== null && typeof value === 'object' ? /** @type {Record<string, unknown>} */ (value)[part] : undefined),
    object,
  );

/**
 * A list input as an array of strings: Zapier sends arrays, or a comma-separated string when
 * a value is mapped from an earlier step.
 * @param {unknown} value
 * @returns {string[]}
 */
const toList = (value) => {
  if (value === undefined || value === null || value === '') return [];
  const items = Array.isArray(value) ? value : String(value).split(',');
  return items.map((item) => String(item).trim()).filter((item) => item !== '');
};

/** @param {unknown} value */
const isEmpty = (value) => value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);

/**
 * The connector's `{message, details?}` error body as one line.
 * @param {HttpResponse} response
 */
const messageOf = (response) => {
  const body = response.data !== null && typeof response.data === 'object' ? response.data : {};
  let message = typeof body.message === 'string' && body.message ? body.message : `HTTP ${response.status}`;
  if (Array.isArray(body.details) && body.details.length > 0) {
    const details = body.details.map(
      /** @param {{path?: string, message?: string} | null} d */
      (d) => (d && d.path ? `${d.path}: ${d.message}` : String(d && d.message)),
    );
    message += ` (${details.join('; ')})`;
  }
  return message;
};

/**
 * `GET /v1/me` style, for error messages; empty when the request is unknown.
 * @param {HttpResponse} response
 */
const whereOf = (response) => {
  try {
    const request = response.request || {};
    return ` on ${request.method || 'GET'} ${new URL(String(request.url)).pathname}`;
  } catch {
    return '';
  }
};

/** @param {import('./types').ConnectorSettings} settings */
const createConnector = (settings) => {
  /**
   * The connection's base URL (`base_url`), without a trailing slash. A connection without
   * one (made before the app had the field) has to be reconnected; one that is not an
   * http(s) URL is an error the user can fix in the connection.
   * @param {ZObject} z
   * @param {Bundle} bundle
   */
  const baseUrl = (z, bundle) => {
    const raw = String((bundle.authData && bundle.authData.base_url) || '').trim();
    if (raw === '') throw new z.errors.ExpiredAuthError(`${settings.name}: the connection has no base URL; reconnect and give the connector's base URL.`);
    /** @type {URL} */
    let url;
    try {
      url = new URL(raw);
    } catch {
      throw new z.errors.Error(`${settings.name}: the base URL ${JSON.stringify(raw)} is not a URL.`, 'invalid_base_url', 400);
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username || url.password) {
      throw new z.errors.Error(`${settings.name}: the base URL ${raw} must be an http:// or https:// URL without query, fragment or credentials.`, 'invalid_base_url', 400);
    }
    return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
  };

  /**
   * The URL of a connector path for the connection: its base URL + the path.
   * @param {ZObject} z
   * @param {Bundle} bundle
   * @param {string} path
   */
  const apiUrl = (z, bundle, path) => baseUrl(z, bundle) + path;

  /**
   * Fills the `{name}` segments of a path from values, URL-encoded; a missing one is an error.
   * @param {string} path
   * @param {Record<string, unknown>} values
   * @param {ZObject} z
   */
  const fillPath = (path, values, z) =>
    path.replace(/\{([A-Za-z][A-Za-z0-9_]*)\}/g, (_match, /** @type {string} */ name) => {
      const value = values[name];
      if (isEmpty(value)) throw new z.errors.Error(`${settings.name}: ${name} is missing`, 'missing_parameter', 400);
      return encodeURIComponent(String(value));
    });

  /**
   * The connection's key, trimmed; empty when the bundle has none.
   * @param {Bundle} bundle
   */
  const keyOf = (bundle) => String((bundle.authData && bundle.authData.api_key) || '').trim();

  /**
   * The headers of a request to an area that reads the key from `Authorization: Bearer`
   * (`bearer`, the device area); none for the connector's key header, which addApiKey adds.
   * @param {Bundle} bundle
   * @param {'api_key' | 'bearer'} scheme
   * @returns {Record<string, string>}
   */
  const authHeaders = (bundle, scheme) => {
    const key = keyOf(bundle);
    return scheme === 'bearer' && key ? { Authorization: `Bearer ${key}` } : {};
  };

  /**
   * beforeRequest: the connection's key goes in the connector's key header, unless the
   * request already carries it as `Authorization: Bearer` (authHeaders).
   * @param {HttpRequestOptions} request
   * @param {ZObject} _z
   * @param {Bundle} bundle
   */
  const addApiKey = (request, _z, bundle) => {
    const key = keyOf(bundle);
    const headers = request.headers || {};
    const hasBearer = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
    if (key && !hasBearer) request.headers = { ...headers, [settings.apiKeyHeader]: key };
    return request;
  };

  /**
   * A Zapier error for a 4xx/5xx answer, carrying the connector's message. A 401 asks the
   * user to reconnect (the key was revoked or is wrong).
   * @param {HttpResponse} response
   * @param {ZObject} z
   * @returns {Error}
   */
  const errorFor = (response, z) => {
    const text = `${settings.name}: ${messageOf(response)} (HTTP ${response.status}${whereOf(response)})`;
    if (response.status === 401) return new z.errors.ExpiredAuthError(text);
    const status = response.status;
    const code = status === 403 ? 'forbidden' : status === 404 ? 'not_found' : status >= 500 ? 'server_error' : 'invalid_request';
    return new z.errors.Error(text, code, status);
  };

  /**
   * afterResponse: throws errorFor() unless the request handles errors itself
   * (skipThrowForStatus); a success whose body is not JSON (Zapier leaves `data` undefined
   * then) is an error whatever the request, as every answer the app reads is JSON.
   * @param {HttpResponse} response
   * @param {ZObject} z
   */
  const handleErrors = (response, z) => {
    if (response.status >= 400 && !response.skipThrowForStatus) throw errorFor(response, z);
    if (response.status < 400 && response.data === undefined && String(response.content || '').trim() !== '') {
      throw new z.errors.Error(`${settings.name}: the answer is not valid JSON (HTTP ${response.status}${whereOf(response)}); is the base URL the connector's?`, 'invalid_response', 502);
    }
    return response;
  };

  /**
   * z.request bounded by timeoutMs(): a connector that does not answer in time is an error
   * that says so, not a Zap step that hangs until Zapier gives up on it.
   * @param {ZObject} z
   * @param {HttpRequestOptions & {url: string}} options
   * @returns {Promise<HttpResponse>}
   */
  const request = async (z, options) => {
    const ms = timeoutMs();
    try {
      return await z.request({ ...options, timeout: ms });
    } catch (err) {
      const error = /** @type {{type?: string, name?: string, message?: string}} */ (err);
      if (error && (error.type === 'request-timeout' || /network timeout/i.test(String(error.message)))) {
        let path = options.url;
        try {
          path = new URL(options.url).pathname;
        } catch {
          // the URL as given
        }
        throw new z.errors.Error(`${settings.name}: no answer from the connector within ${ms / 1000} s (${options.method || 'GET'} ${path}).`, 'timeout', 504);
      }
      throw err;
    }
  };

  /**
   * The problem with an answer's shape as a Zapier error, naming the request.
   * @param {ZObject} z
   * @param {HttpResponse} response
   * @param {string} problem
   */
  const shapeError = (z, response, problem) =>
    new z.errors.Error(`${settings.name}: unexpected answer (HTTP ${response.status}${whereOf(response)}): ${problem}.`, 'invalid_response', 502);

  /**
   * The answer's body when it is an object with `fields`, else a shapeError.
   * @param {ZObject} z
   * @param {HttpResponse} response
   * @param {string[]} [fields] that must be non-empty strings or numbers
   * @param {string[]} [objects] that must be objects
   * @returns {any} the body, checked as far as `fields` and `objects` go
   */
  const objectOf = (z, response, fields, objects) => {
    const problem = objectProblem(response.data, fields, objects);
    if (problem) throw shapeError(z, response, problem);
    return response.data;
  };

  return { name: settings.name, baseUrl, apiUrl, fillPath, authHeaders, addApiKey, errorFor, handleErrors, request, shapeError, objectOf };
};

/** @typedef {ReturnType<typeof createConnector>} Connector */

module.exports = { createConnector, isEmpty, pick, toList };
