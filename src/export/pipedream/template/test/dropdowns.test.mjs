import assert from "node:assert/strict";
import {
  before, test,
} from "node:test";
import {
  api, appInstance, keyOf, loadComponents, manifest, propOptions,
} from "./harness.mjs";

// Every dropdown (a propDefinition of the app): its pages equal the connector's option
// endpoint page for page, through Pipedream's prevContext; `query` searches on the server; a
// dropdown with a path parameter (the groups of a menu) follows the prop that fills it.

let app;
let components;
let served;

before(async () => {
  ({
    app, components,
  } = await loadComponents());
  served = await manifest();
});

const fill = (path, params) => path.replace(/\{([A-Za-z0-9]+)\}/g, (_m, name) => encodeURIComponent(params[name]));

/** The connector's own answer for one page (`cursor` from the previous page's Link header). */
async function directPage(source, params, {
  q, cursor,
} = {}) {
  const search = new URLSearchParams({
    format: "objects",
    limit: "100",
  });
  if (q) search.set("q", q);
  if (cursor) search.set("cursor", cursor);
  const response = await api(`${fill(source.path, params)}?${search}`);
  assert.equal(response.status, 200);
  const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("link") ?? "");
  return {
    options: response.body,
    total: Number(response.headers.get("x-total-count")),
    cursor: next
      ? new URL(next[1]).searchParams.get("cursor")
      : null,
  };
}

/** Reads a dropdown to its end through prevContext, checking each page against the connector. */
async function readAll(source, params, query) {
  const options = app.propDefinitions[source.id].options;
  const instance = appInstance(app);
  const seen = [];
  let prevContext = {};
  let cursor;
  let pages = 0;
  for (;;) {
    const page = await options.call(instance, {
      ...params,
      query,
      prevContext,
    });
    if (page.options.length === 0) break;
    const direct = await directPage(source, params, {
      q: query,
      cursor,
    });
    assert.deepEqual(page.options, direct.options, `${source.id} page ${pages + 1}`);
    seen.push(...page.options);
    pages += 1;
    cursor = direct.cursor;
    prevContext = page.context;
    if (cursor === null) {
      assert.equal(page.context.cursor, null, "the last page ends the dropdown");
      assert.deepEqual((await options.call(instance, {
        ...params,
        query,
        prevContext,
      })).options, []);
      break;
    }
  }
  return {
    seen,
    pages,
  };
}

/** Values for an option source's path parameters: the option with the longest list wins. */
async function paramsFor(source) {
  const params = {};
  for (const param of source.params) {
    const from = served.optionSources.find((candidate) => candidate.id === param.optionsFrom);
    const choices = (await directPage(from, {})).options;
    let best = null;
    for (const choice of choices) {
      const total = (await directPage(source, {
        ...params,
        [param.name]: choice.value,
      })).total;
      if (!best || total > best.total) best = {
        value: choice.value,
        total,
      };
    }
    params[param.name] = best.value;
  }
  return params;
}

test("every dropdown pages through prevContext to the connector's whole list", async () => {
  for (const source of served.optionSources) {
    const params = await paramsFor(source);
    const { total } = await directPage(source, params);
    const {
      seen, pages,
    } = await readAll(source, params, undefined);
    assert.equal(seen.length, total, `${source.id}: every option once`);
    assert.equal(new Set(seen.map((option) => option.value)).size, total, `${source.id}: no option twice`);
    assert.equal(pages, Math.max(1, Math.ceil(total / 100)));
  }
});

test("the long dropdowns of the test account reach a second page", async (t) => {
  const devices = served.optionSources.find((source) => source.id === "devices");
  if (!devices) return;
  const { total } = await directPage(devices, {});
  if (!(total > 100)) {
    t.skip(`the key sees ${total} devices, one page; the test dataset has more`);
    return;
  }
  const { pages } = await readAll(devices, {}, undefined);
  assert.ok(pages >= 2, `devices: ${pages} page(s)`);
});

test("query searches on the server", async () => {
  for (const source of served.optionSources.filter((candidate) => candidate.search !== false)) {
    const params = await paramsFor(source);
    const first = (await directPage(source, params)).options;
    if (first.length === 0) continue;
    // A part of a label, in other case: the connector matches case-insensitively.
    const label = first[first.length - 1].label;
    const query = label.slice(Math.max(0, label.length - 5)).toUpperCase();
    const { seen } = await readAll(source, params, query);
    assert.ok(seen.length >= 1, `${source.id}: "${query}" finds ${label}`);
    for (const option of seen) assert.ok(option.label.toLowerCase().includes(query.toLowerCase()), `${option.label} matches ${query}`);
    assert.equal(seen.length, (await directPage(source, params, {
      q: query,
    })).total);
  }
});

test("a dropdown that depends on another prop follows it (groups follow the menu)", async (t) => {
  for (const operation of served.operations) {
    const action = components.get(keyOf(app, operation.id));
    for (const input of operation.inputs.filter((candidate) => Object.keys(candidate.optionParams ?? {}).length > 0)) {
      const source = served.optionSources.find((candidate) => candidate.id === input.optionsFrom);
      const [
        param,
        fromKey,
      ] = Object.entries(input.optionParams)[0];
      const from = served.optionSources.find((candidate) => candidate.id === source.params.find((p) => p.name === param).optionsFrom);
      const choices = (await directPage(from, {})).options;
      if (choices.length < 2) {
        t.skip(`the key has ${choices.length} ${from.id}; this needs two (the test dataset)`);
        continue;
      }
      const lists = [];
      for (const choice of choices.slice(0, 2)) {
        const page = await propOptions(action, input.key, {
          [fromKey]: choice.value,
        }, {
          prevContext: {},
        });
        assert.deepEqual(page.options, (await directPage(source, {
          [param]: choice.value,
        })).options);
        lists.push(page.options.map((option) => option.value));
      }
      assert.notDeepEqual(lists[0], lists[1], `${operation.id}.${input.key} changes with ${fromKey}`);
    }
  }
});
