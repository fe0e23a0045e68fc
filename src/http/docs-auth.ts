/**
 * A Swagger UI plugin for `GET /docs` that makes one key enough: the document has two
 * security schemes for the same key (`Authorization: Bearer` for the device area, `X-API-Key`
 * for `/v1`), so the Authorize dialog would otherwise ask for it twice and half the
 * operations would stay locked. Authorizing either scheme authorizes every key scheme with
 * the same value (a value typed into the other box as well wins); logging out of one logs
 * out of all. Swagger UI then sends the header each operation declares.
 *
 * It runs in the browser: the page embeds `oneKeyAuthPlugin.toString()`, so the function
 * must not use anything from outside its own body. test/unit/docs-auth.test.ts runs it
 * against a stand-in of the Swagger UI system.
 */

/** The parts of Swagger UI's Immutable.js maps the plugin reads. */
export interface SchemeMap {
  get(key: string): unknown;
  forEach(visit: (value: SchemeMap, key: string) => unknown): unknown;
}

export interface SwaggerSystem {
  specSelectors: { securityDefinitions(): SchemeMap | null | undefined };
}

/** One entry of the `authorize` action's payload, as the dialog builds it. */
export interface Authorization {
  name: string;
  schema: SchemeMap;
  value: unknown;
}

type Authorize = (payload: Record<string, Authorization>) => unknown;
type Logout = (names: string[]) => unknown;

export function oneKeyAuthPlugin() {
  /** The schemes that carry the key itself: API-key headers and HTTP bearer, but the operator's token. */
  const keySchemes = (system: SwaggerSystem): Array<[string, SchemeMap]> => {
    const found: Array<[string, SchemeMap]> = [];
    system.specSelectors.securityDefinitions()?.forEach((schema, name) => {
      const type = schema.get('type');
      const scheme = String(schema.get('scheme') ?? '').toLowerCase();
      // The operator's token (AdminToken) is not a key: it is never copied to or from the key boxes.
      if (name !== 'AdminToken' && (type === 'apiKey' || (type === 'http' && scheme === 'bearer'))) found.push([name, schema]);
    });
    return found;
  };

  return {
    statePlugins: {
      auth: {
        wrapActions: {
          authorize: (original: Authorize, system: SwaggerSystem) => (payload: Record<string, Authorization>) => {
            const filled = (entry: Authorization | undefined) => typeof entry?.value === 'string' && entry.value.trim() !== '';
            const schemes = keySchemes(system);
            const first = schemes.map(([name]) => payload[name]).find(filled);
            if (first === undefined) return original(payload);
            const all: Record<string, Authorization> = {};
            for (const [name, schema] of schemes) all[name] = filled(payload[name]) ? payload[name]! : { name, schema, value: first.value };
            return original({ ...payload, ...all });
          },
          logout: (original: Logout, system: SwaggerSystem) => (names: string[]) => {
            const keyNames = keySchemes(system).map(([name]) => name);
            const touchesKey = names.some((name) => keyNames.includes(name));
            return original(touchesKey ? [...new Set([...names, ...keyNames])] : names);
          },
        },
      },
    },
  };
}
