import { readdirSync } from "node:fs";
import { createServer } from "node:http";
import {
  dirname, join,
} from "node:path";
import { fileURLToPath } from "node:url";

/**
 * What Pipedream gives a component when it runs, rebuilt for tests: props resolved to values,
 * the app prop with `$auth` and its methods, `this.db` (get/set of JSON values), `this.http`
 * (`endpoint`, `respond`), `this.$emit`, methods bound to the component, and the `$` of an
 * action's `run({ $ })`. The tests call a live connector: CONNECTOR_BASE_URL and
 * CONNECTOR_API_KEY (and, for the sources, CONNECTOR_CONTROL_URL, which makes devices go
 * offline or come back).
 */

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export const baseUrl = String(process.env.CONNECTOR_BASE_URL ?? "").replace(/\/+$/, "");
export const apiKey = process.env.CONNECTOR_API_KEY;
export const otherApiKey = process.env.CONNECTOR_OTHER_API_KEY;
export const controlUrl = process.env.CONNECTOR_CONTROL_URL;
if (!baseUrl || !apiKey) throw new Error("Set CONNECTOR_BASE_URL and CONNECTOR_API_KEY to a running connector and one of its keys; see README.md.");

/** The connection as Pipedream stores it: the app's auth fields. */
export const $auth = {
  base_url: baseUrl,
  api_key: apiKey,
};

/** A direct call to the connector, for what the components' results must equal. */
export async function api(path, {
  key = apiKey, bearer = false, method = "GET", body,
} = {}) {
  const response = await fetch(baseUrl + path, {
    method,
    headers: {
      ...(bearer
        ? {
          authorization: `Bearer ${key}`,
        }
        : {
          "x-api-key": key,
        }),
      ...(body
        ? {
          "content-type": "application/json",
        }
        : {}),
    },
    body: body
      ? JSON.stringify(body)
      : undefined,
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text
      ? JSON.parse(text)
      : null,
  };
}

/** The manifest the connector serves: what the app was generated from. */
export async function manifest() {
  return (await api("/v1/manifest")).body;
}

/** The app prop as Pipedream binds it: its methods see each other and `$auth` through `this`. */
export function appInstance(definition, auth = $auth) {
  const instance = {
    $auth: auth,
  };
  for (const [name, method] of Object.entries(definition.methods ?? {})) instance[name] = method.bind(instance);
  return instance;
}

/** `this.db`: values go through JSON, as Pipedream stores them. */
export class MemoryDb {
  constructor() {
    this.values = new Map();
  }
  get(key) {
    const text = this.values.get(key);
    return text === undefined
      ? undefined
      : JSON.parse(text);
  }
  set(key, value) {
    this.values.set(key, JSON.stringify(value));
  }
}

/**
 * A running component: `self` is its `this`. `props` are the user's values; `db` is shared
 * between instances to model a restart; `endpoint` is the URL of the source's HTTP interface.
 */
export function instantiate(component, {
  props = {}, auth = $auth, db = new MemoryDb(), endpoint,
} = {}) {
  const self = {};
  const emitted = [];
  const responses = [];
  for (const [key, definition] of Object.entries(component.props ?? {})) {
    if (definition?.type === "app") self[key] = appInstance(definition, auth);
    else if (definition === "$.service.db") self[key] = db;
    else if (definition?.type === "$.interface.http") {
      self[key] = {
        endpoint,
        respond: (response) => responses.push(response),
      };
    } else if (definition?.type === "$.interface.timer") self[key] = {
      type: definition.type,
    };
    else self[key] = key in props
      ? props[key]
      : definition?.default;
  }
  for (const [name, method] of Object.entries(component.methods ?? {})) self[name] = method.bind(self);
  self.$emit = (event, meta) => emitted.push({
    event,
    meta,
  });
  const exports = {};
  const $ = {
    export: (key, value) => {
      exports[key] = value;
    },
  };
  return {
    self,
    db,
    emitted,
    responses,
    exports,
    run: (event) => component.type === "action"
      ? component.run.call(self, {
        $,
      })
      : component.run.call(self, event),
    activate: () => component.hooks.activate.call(self),
    deactivate: () => component.hooks.deactivate.call(self),
  };
}

/**
 * The options of a component's prop that takes a dropdown from the app (its propDefinition),
 * with the other props configured as `configured`: what Pipedream shows for that prop.
 */
export function propOptions(component, key, configured = {}, {
  query, prevContext,
} = {}) {
  const [app, name, map] = component.props[key].propDefinition;
  const args = map
    ? map(configured)
    : {};
  return app.propDefinitions[name].options.call(appInstance(app), {
    ...args,
    query,
    prevContext,
  });
}

function componentPaths(dir) {
  return readdirSync(join(root, dir), {
    withFileTypes: true,
  })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(root, dir, entry.name, `${entry.name}.mjs`));
}

/** Every action and source of the app by key, and the app itself. */
export async function loadComponents() {
  const components = new Map();
  for (const path of [
    ...componentPaths("actions"),
    ...componentPaths("sources"),
  ]) {
    const component = (await import(path)).default;
    components.set(component.key, component);
  }
  const appFile = readdirSync(root).find((name) => name.endsWith(".app.mjs"));
  const app = (await import(join(root, appFile))).default;
  return {
    app,
    components,
  };
}

/** `get_device` → `<app>-get-device`, the component key of a manifest id. */
export const keyOf = (app, id) => `${app.app}-${id.replace(/_/g, "-")}`;

/**
 * A local HTTP server standing in for a source's Pipedream endpoint: it answers 200 and keeps
 * each request as the HTTP event Pipedream would pass to `run` ({method, path, query, headers,
 * bodyRaw, body}).
 */
export async function startReceiver() {
  const requests = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const bodyRaw = Buffer.concat(chunks).toString("utf8");
      const url = new URL(req.url, "http://receiver");
      let body = bodyRaw;
      try {
        body = JSON.parse(bodyRaw);
      } catch {
        // not JSON: kept as text, as Pipedream does
      }
      requests.push({
        method: req.method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        bodyRaw,
        body,
      });
      res.writeHead(200).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    requests,
    endpoint: (name) => `http://127.0.0.1:${port}/${name}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns something truthy, or fails after `timeoutMs`. */
export async function waitFor(what, check, timeoutMs = 20000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** Makes a device go offline or come back through the test control. */
export async function setDevice(id, status) {
  if (!controlUrl) throw new Error("Set CONNECTOR_CONTROL_URL (npm run test:platforms starts one).");
  const response = await fetch(`${controlUrl}/devices/${encodeURIComponent(id)}/${status}`, {
    method: "POST",
  });
  if (response.status !== 204) throw new Error(`the test control answered ${response.status} for ${id} ${status}`);
}
