import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
	Icon,
	INodeProperties,
} from 'n8n-workflow';
import { connector } from '../nodes/shared/connector';
import { timeoutMs } from '../nodes/shared/shape';

/**
 * The connector's base URL and API key. Routes under `/v1/` read the key from `X-API-Key`;
 * the device area (`/devices`) reads it from `Authorization: Bearer`, so the header follows
 * the path of each request.
 */
export class SignageConnectorApi implements ICredentialType {
	name = 'signageConnectorApi';

	displayName = `${connector.name} API`;

	icon: Icon = { light: 'file:../icons/signage.svg', dark: 'file:../icons/signage.dark.svg' };

	documentationUrl = `${connector.baseUrl}/docs`;

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: connector.baseUrl,
			placeholder: 'https://connector.example.com',
			description: 'Where the connector answers, without a trailing slash',
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description: 'A key of the account, with the scopes the nodes need',
		},
	];

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		const key = String(credentials.apiKey ?? '');
		const base = String(credentials.baseUrl ?? '').replace(/\/+$/, '');
		const url = new URL(requestOptions.url, `${requestOptions.baseURL ?? base}/`);
		const basePath = new URL(`${base}/`).pathname.replace(/\/$/, '');
		const path = url.pathname.startsWith(basePath) ? url.pathname.slice(basePath.length) : url.pathname;
		const header = path.startsWith('/v1/')
			? { 'X-API-Key': key }
			: { Authorization: `Bearer ${key}` };
		return { ...requestOptions, headers: { ...(requestOptions.headers ?? {}), ...header } };
	}

	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{String($credentials.baseUrl).replace(/\\/+$/, "")}}',
			url: connector.auth.test.path,
			method: connector.auth.test.method === 'POST' ? 'POST' : 'GET',
			timeout: timeoutMs,
		},
		// n8n shows the HTTP status text of a failed test; these are the connector's own messages.
		rules: [
			{ type: 'responseCode', properties: { value: 401, message: 'Invalid API key' } },
			{
				type: 'responseCode',
				properties: { value: 403, message: 'The key lacks a scope these nodes need' },
			},
			// n8n takes rules of one kind only, so a 200 from something else at the base URL
			// passes this test; the first node run then fails with what was wrong.
		],
	};
}
