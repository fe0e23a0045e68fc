import { PieceAuth, Property } from '@activepieces/pieces-framework';
import { definition } from '../definition';
import { call, credentials, pick } from './connector';
import { objectProblem } from './shape';

/**
 * The connection: the connector's base URL and an API key (a secret). Activepieces checks a
 * new connection with the manifest's auth test (`GET /v1/me`) and shows the connector's own
 * message when it is refused.
 */
export const signageAuth = PieceAuth.CustomAuth({
  displayName: 'Connection',
  description: `A ${definition.name} API key with the scopes ${definition.auth.scopes.join(', ')}, and the connector's base URL.`,
  required: true,
  props: {
    base_url: Property.ShortText({
      displayName: 'Base URL',
      description: `Where the connector runs, e.g. ${definition.defaultBaseUrl}`,
      required: true,
      defaultValue: definition.defaultBaseUrl,
    }),
    api_key: PieceAuth.SecretText({
      displayName: 'API key',
      description: `Sent as the ${definition.apiKeyHeader} header.`,
      required: true,
    }),
  },
  validate: async ({ auth }) => {
    try {
      await testConnection(auth);
      return { valid: true };
    } catch (err) {
      return { valid: false, error: err instanceof Error ? err.message : String(err) };
    }
  },
});

/** The auth test; answers the connection's label (the account name) when the connector gives one. */
export async function testConnection(auth: unknown): Promise<{ label: string | null; body: unknown }> {
  const test = definition.auth.test;
  // `{key, account}`: anything else (a proxy's page, an empty object) is not a connector.
  const check = (body: unknown) => objectProblem(body, [], ['key']);
  const response = await call(credentials(auth), { method: test.method, path: test.path, ...(test.query ? { query: test.query } : {}), check });
  const label = definition.auth.connectionLabel ? pick(response.body, definition.auth.connectionLabel) : null;
  return { label: typeof label === 'string' && label ? label : null, body: response.body };
}
