import { describe, expect, test } from '@jest/globals';
import { oneKeyAuthPlugin, type Authorization, type SchemeMap, type SwaggerSystem } from '../../src/http/docs-auth.js';

// The plugin runs in the browser from its source text, so it is tested the same way: rebuilt
// from `toString()` (anything it used from outside its body would fail here), against a
// stand-in of the Swagger UI system with this service's two key schemes and an OAuth one.

class Scheme implements SchemeMap {
  constructor(private readonly fields: Record<string, string>) {}
  get(key: string): unknown {
    return this.fields[key];
  }
  forEach(): unknown {
    throw new Error('a scheme is not iterated');
  }
}

class Schemes implements SchemeMap {
  constructor(private readonly entries: Record<string, Scheme>) {}
  get(key: string): unknown {
    return this.entries[key];
  }
  forEach(visit: (value: SchemeMap, key: string) => unknown): unknown {
    for (const [key, value] of Object.entries(this.entries)) visit(value, key);
    return undefined;
  }
}

const schemes = {
  ApiKeyHeader: new Scheme({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
  BearerAuth: new Scheme({ type: 'http', scheme: 'bearer' }),
  Partner: new Scheme({ type: 'oauth2' }),
};
const system: SwaggerSystem = { specSelectors: { securityDefinitions: () => new Schemes(schemes) } };

type Plugin = typeof oneKeyAuthPlugin;
const plugin = (new Function(`return (${oneKeyAuthPlugin.toString()})`) as () => Plugin)()();
const { authorize, logout } = plugin.statePlugins.auth.wrapActions;

function authorized(payload: Record<string, Authorization>): Record<string, unknown> {
  let seen: Record<string, Authorization> = {};
  authorize((p) => (seen = p), system)(payload);
  return Object.fromEntries(Object.entries(seen).map(([name, entry]) => [name, entry.value]));
}

describe('one key authorizes every key scheme', () => {
  test('a key entered for X-API-Key also authorizes Bearer, and the other way round', () => {
    expect(authorized({ ApiKeyHeader: { name: 'ApiKeyHeader', schema: schemes.ApiKeyHeader, value: 'sk_live_1' } })).toEqual({
      ApiKeyHeader: 'sk_live_1',
      BearerAuth: 'sk_live_1',
    });
    expect(authorized({ BearerAuth: { name: 'BearerAuth', schema: schemes.BearerAuth, value: 'sk_live_2' } })).toEqual({
      ApiKeyHeader: 'sk_live_2',
      BearerAuth: 'sk_live_2',
    });
  });

  test('the copy carries the scheme definition Swagger UI needs to send the header', () => {
    let seen: Record<string, Authorization> = {};
    authorize((p) => (seen = p), system)({ ApiKeyHeader: { name: 'ApiKeyHeader', schema: schemes.ApiKeyHeader, value: 'k' } });
    expect(seen.BearerAuth).toEqual({ name: 'BearerAuth', schema: schemes.BearerAuth, value: 'k' });
  });

  test('a value typed into both boxes is kept; an emptied box is filled from the other', () => {
    expect(
      authorized({
        ApiKeyHeader: { name: 'ApiKeyHeader', schema: schemes.ApiKeyHeader, value: 'a' },
        BearerAuth: { name: 'BearerAuth', schema: schemes.BearerAuth, value: 'b' },
      }),
    ).toEqual({ ApiKeyHeader: 'a', BearerAuth: 'b' });
    expect(
      authorized({
        ApiKeyHeader: { name: 'ApiKeyHeader', schema: schemes.ApiKeyHeader, value: ' ' },
        BearerAuth: { name: 'BearerAuth', schema: schemes.BearerAuth, value: 'b' },
      }),
    ).toEqual({ ApiKeyHeader: 'b', BearerAuth: 'b' });
  });

  test('other schemes (OAuth) pass through untouched', () => {
    const oauth = { name: 'Partner', schema: schemes.Partner, value: { token: 't' } };
    expect(authorized({ Partner: oauth })).toEqual({ Partner: { token: 't' } });
  });

  test('logging out of one key scheme logs out of both', () => {
    let names: string[] = [];
    logout((n) => (names = n), system)(['BearerAuth']);
    expect(names.sort()).toEqual(['ApiKeyHeader', 'BearerAuth']);
    logout((n) => (names = n), system)(['Partner']);
    expect(names).toEqual(['Partner']);
  });
});
