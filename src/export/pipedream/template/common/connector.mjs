import { axios } from "@pipedream/platform";
import constants from "./constants.mjs";
import {
  listProblem, objectProblem, shapeError,
} from "./shape.mjs";

/**
 * The app's methods: every call to the connector goes through `_request`, with the connection's
 * `base_url` and `api_key` (this.$auth). Components reach them as `this.<app>.<method>()`.
 */

/** Dropdown page size: the connector returns the next page's cursor in a `Link` header. */
const OPTIONS_PAGE_SIZE = 100;

/** `{name}` segments filled from values, URL-encoded; a missing value is an error. */
export function fillPath(path, values) {
  return path.replace(/\{([A-Za-z][A-Za-z0-9_]*)\}/g, (_match, name) => {
    const value = values[name];
    if (isEmpty(value)) throw new Error(`${constants.name}: ${name} is missing`);
    return encodeURIComponent(String(value));
  });
}

export function isEmpty(value) {
  return value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0);
}

/** A list prop as strings: an array, or a comma-separated string mapped from an earlier step. */
export function toList(value) {
  if (isEmpty(value)) return [];
  const items = Array.isArray(value) ? value : String(value).split(",");
  return items.map((item) => String(item).trim()).filter((item) => item !== "");
}

/** A dotted path into an object (`account.name`). */
export function pick(object, path) {
  return path.split(".").reduce((value, part) => (value !== null && typeof value === "object" ? value[part] : undefined), object);
}

/** The `cursor` of the `Link: <…>; rel="next"` header, or null on the last page. */
export function nextCursor(link) {
  const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(String(link ?? ""));
  return match ? new URL(match[1]).searchParams.get("cursor") : null;
}

/**
 * How long a call may wait for the connector's answer: 30 s, or CONNECTOR_TIMEOUT_MS (the
 * app's tests shorten it to try a connector that never answers).
 */
export function timeoutMs() {
  const value = Number(process.env.CONNECTOR_TIMEOUT_MS);
  return Number.isInteger(value) && value > 0
    ? value
    : 30000;
}

/** The connector's `{message}` error body, when a call failed with one. */
export function connectorMessage(err) {
  const body = err?.response?.data;
  return body && typeof body.message === "string" ? body.message : null;
}

export default {
  methods: {
    _baseUrl() {
      return String(this.$auth.base_url || constants.defaultBaseUrl).trim().replace(/\/+$/, "");
    },
    /** `api_key`: the key header; `bearer`: `Authorization: Bearer`, what the device area takes. */
    _headers(auth = "api_key") {
      const key = String(this.$auth.api_key ?? "").trim();
      return auth === "bearer"
        ? { Authorization: `Bearer ${key}` }
        : { [constants.apiKeyHeader]: key };
    },
    /**
     * One call; `$` is the action's step (for Pipedream's debug exports) or the component.
     * `check(body)` returns what is wrong with a successful answer's shape, or null; a body
     * that is not JSON (axios leaves it as text) and no answer within timeoutMs() are errors
     * too, never an empty result.
     */
    async _request({
      $ = this, method = "GET", path, params, data, auth, returnFullResponse, check,
    }) {
      const ms = timeoutMs();
      let response;
      try {
        response = await axios($, {
          method,
          url: this._baseUrl() + path,
          params,
          data,
          headers: this._headers(auth),
          timeout: ms,
          returnFullResponse: true,
        });
      } catch (err) {
        if (!err.response && (err.code === "ECONNABORTED" || err.code === "ETIMEDOUT" || /timeout/i.test(String(err.message)))) {
          const wrapped = new Error(`${constants.name}: no answer from the connector within ${ms / 1000} s (${method} ${path}).`);
          wrapped.status = 504;
          throw wrapped;
        }
        const message = connectorMessage(err);
        if (message && err.response) {
          const wrapped = new Error(`${constants.name}: ${message} (HTTP ${err.response.status} on ${method} ${path})`);
          wrapped.status = err.response.status;
          throw wrapped;
        }
        throw err;
      }
      const body = response.data;
      if (typeof body === "string" && body.trim() !== "") {
        throw shapeError(constants.name, method, path, "the answer is not valid JSON; is the base URL the connector's?");
      }
      const problem = check
        ? check(body)
        : null;
      if (problem) throw shapeError(constants.name, method, path, problem);
      return returnFullResponse
        ? response
        : body;
    },
    /** The connection test (`GET /v1/me`): the answer, and the connection's label (the account). */
    async testConnection({ $ } = {}) {
      const me = await this._request({
        $,
        method: constants.authTest.method,
        path: constants.authTest.path,
        params: constants.authTest.query,
        // `{key, account}`: anything else (a proxy's page, an empty object) is not a connector.
        check: (body) => objectProblem(body, [], [
          "key",
        ]),
      });
      const label = constants.connectionLabel ? pick(me, constants.connectionLabel) : null;
      return { me, label: typeof label === "string" && label ? label : constants.name };
    },
    /**
     * One page of a dropdown, the way Pipedream pages `options()`: the cursor of the next page
     * travels in `context`; `context.cursor === null` after the last page, so a further call
     * answers no options and Pipedream stops asking.
     */
    async optionPage({ $, path, params = {}, query, prevContext }) {
      if (prevContext && prevContext.cursor === null) return { options: [], context: { cursor: null } };
      const response = await this._request({
        $,
        path: fillPath(path, params),
        params: {
          format: "objects",
          limit: OPTIONS_PAGE_SIZE,
          q: isEmpty(query) ? undefined : String(query),
          cursor: prevContext?.cursor || undefined,
        },
        returnFullResponse: true,
        check: (body) => listProblem(body, [
          "value",
          "label",
        ]),
      });
      const options = response.data.map(({
        label, value,
      }) => ({
        label,
        value,
      }));
      return { options, context: { cursor: nextCursor(response.headers?.link) } };
    },
    /** A hook for `target_url`: `{id, secret, …}` (the same hook again if it already exists). */
    async createHook({ $, endpoint, targetUrl, fields }) {
      return this._request({
        $,
        method: endpoint.method,
        path: endpoint.path,
        params: endpoint.query,
        data: {
          ...endpoint.body,
          ...fields,
          target_url: targetUrl,
        },
        // Its id (to delete it) and secret (to check deliveries).
        check: (body) => objectProblem(body, [
          "id",
          "secret",
        ]),
      });
    },
    /** Deletes a hook; one that is already gone counts as deleted. */
    async deleteHook({ $, endpoint, id }) {
      try {
        await this._request({ $, method: endpoint.method, path: fillPath(endpoint.path, { id }), params: endpoint.query });
      } catch (err) {
        if (err.status !== 404 && err.status !== 410) throw err;
      }
    },
    /** Calls a GET endpoint of the manifest (its fixed query plus `params`); `check` as in _request. */
    async get({
      $, endpoint, params = {}, pathValues = {}, auth, check,
    }) {
      return this._request({
        $,
        path: fillPath(endpoint.path, pathValues),
        params: {
          ...endpoint.query,
          ...params,
        },
        auth,
        check,
      });
    },
  },
};
