import { Property, type DropdownState } from '@activepieces/pieces-framework';
import { definition } from '../definition';
import { signageAuth } from './auth';
import { call, credentials, fillPath, isEmpty, nextLink, type Credentials } from './connector';
import { pairsProblem } from './shape';
import type { OptionSourceSpec } from './types';

/**
 * Dropdowns backed by the connector's option endpoints (`GET /v1/.../options`). Activepieces
 * asks a dropdown for its whole list at once (it has no "load more"), so the piece reads pages
 * of `pageSize` choices through the `Link: rel="next"` cursor, up to `maxPages` pages, and
 * passes what the user types as the server-side filter `q` (`refreshOnSearch`). A list longer
 * than the bound ends in a hint to type a few letters.
 */
export const pageSize = 100;
export const maxPages = 10;

const sources = new Map(definition.optionSources.map((source) => [source.id, source]));

export function optionSource(id: string): OptionSourceSpec {
  const source = sources.get(id);
  if (!source) throw new Error(`${definition.name}: unknown option source ${id}`);
  return source;
}

/** `[label, value]` tuples → Activepieces options. */
function toOptions(body: unknown): Array<{ label: string; value: string }> {
  if (!Array.isArray(body)) return [];
  return body
    .filter((entry): entry is [unknown, unknown] => Array.isArray(entry) && entry.length >= 2)
    .map(([label, value]) => ({ label: String(label), value: String(value) }));
}

export interface ChoicesPage {
  options: Array<{ label: string; value: string }>;
  /** Matches on the server (`X-Total-Count`). */
  total: number | null;
  /** More pages remained beyond the bound. */
  truncated: boolean;
}

/**
 * The choices of an option source: `params` fills its path (`{menuId}`), `search` is sent as
 * `q`. Reads up to `pages` pages of `size`.
 */
export async function fetchChoices(
  creds: Credentials,
  source: OptionSourceSpec,
  params: Record<string, unknown>,
  search: string | undefined,
  pages = maxPages,
  size = Math.min(pageSize, source.maxLimit),
): Promise<ChoicesPage> {
  const options: ChoicesPage['options'] = [];
  const query: Record<string, string> = { limit: String(size) };
  if (search && search.trim()) query['q'] = search.trim();
  let path = fillPath(source.path, params);
  let total: number | null = null;
  for (let page = 0; page < pages; page += 1) {
    const response = await call(creds, { method: 'GET', path, query, check: pairsProblem });
    options.push(...toOptions(response.body));
    const count = Number((response.headers as Record<string, unknown> | undefined)?.['x-total-count']);
    if (Number.isFinite(count)) total = count;
    const next = nextLink(response.headers);
    if (!next) return { options, total, truncated: false };
    // The next page's link carries every parameter (q, limit, cursor); it is resolved against
    // the connection's base URL, so a proxy in front of the connector keeps working.
    const url = new URL(next, creds.base_url + path);
    path = url.pathname.slice(new URL(creds.base_url).pathname.replace(/\/+$/, '').length);
    for (const key of Object.keys(query)) delete query[key];
    url.searchParams.forEach((value, key) => (query[key] = value));
  }
  return { options, total, truncated: true };
}

/**
 * The dropdown state for an option source. `paramInputs` maps the source's path parameters
 * to the props that supply them (`{menuId: 'menu_id'}`); while one is empty the dropdown is
 * disabled and says what to choose first.
 */
export async function dropdownState(
  auth: unknown,
  sourceId: string,
  paramInputs: Record<string, string>,
  propsValue: Record<string, unknown>,
  search: string | undefined,
): Promise<DropdownState<string>> {
  if (!auth) return { disabled: true, placeholder: 'Connect your account first', options: [] };
  const source = optionSource(sourceId);
  const params: Record<string, unknown> = {};
  for (const param of source.params) {
    const input = paramInputs[param.name] ?? param.name;
    const value = propsValue[input];
    if (isEmpty(value)) return { disabled: true, placeholder: `Choose a ${param.title} first`, options: [] };
    params[param.name] = value;
  }
  try {
    const page = await fetchChoices(credentials(auth), source, params, search);
    const placeholder = page.truncated
      ? `Showing the first ${page.options.length} of ${page.total ?? 'many'}: type to search`
      : page.options.length === 0
        ? search
          ? `No ${source.title.toLowerCase()} matches "${search}"`
          : `No ${source.title.toLowerCase()} found`
        : undefined;
    return { disabled: false, options: page.options, ...(placeholder ? { placeholder } : {}) };
  } catch (err) {
    return { disabled: true, placeholder: err instanceof Error ? err.message : String(err), options: [] };
  }
}

interface DropdownInput {
  key: string;
  label: string;
  helpText: string | null;
  required: boolean;
  list: boolean;
  optionsFrom: string;
  optionParams: Record<string, string>;
}

/** A prop whose choices come from an option source: a dropdown, or a multi-select for a list. */
export function dropdownProp(input: DropdownInput) {
  const refreshers = Object.values(input.optionParams);
  const common = {
    displayName: input.label,
    ...(input.helpText ? { description: input.helpText } : {}),
    required: input.required,
    refreshers,
    refreshOnSearch: true,
    options: async (propsValue: Record<string, unknown>, ctx: { searchValue?: string }) =>
      dropdownState(propsValue['auth'], input.optionsFrom, input.optionParams, propsValue, ctx?.searchValue),
  };
  // `auth` tells the framework the piece's auth type; the connection reaches `options` as
  // propsValue.auth.
  return input.list
    ? Property.MultiSelectDropdown({ ...common, auth: signageAuth })
    : Property.Dropdown({ ...common, auth: signageAuth });
}
