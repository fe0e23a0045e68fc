import {
	NodeApiError,
	type IDataObject,
	type IExecuteFunctions,
	type IHookFunctions,
	type IHttpRequestMethods,
	type ILoadOptionsFunctions,
	type IPollFunctions,
	type IWebhookFunctions,
	type JsonObject,
} from 'n8n-workflow';

/** The credential type every node of this package uses. */
export const credentialType = 'signageConnectorApi';

type Context =
	| IExecuteFunctions
	| IHookFunctions
	| ILoadOptionsFunctions
	| IPollFunctions
	| IWebhookFunctions;

/** `{name}` segments of a path, each replaced by its URI-encoded value. */
export function fillPath(path: string, values: Record<string, string>): string {
	return path.replace(/\{([A-Za-z0-9_]+)\}/g, (_match, name: string) =>
		encodeURIComponent(values[name] ?? ''),
	);
}

export interface ConnectorRequest {
	method: IHttpRequestMethods;
	path: string;
	qs?: IDataObject;
	body?: IDataObject;
}

async function send(this: Context, request: ConnectorRequest, missingIsUndefined: boolean): Promise<unknown> {
	const credentials = await this.getCredentials(credentialType);
	const baseUrl = String(credentials.baseUrl ?? '').replace(/\/+$/, '');
	try {
		return await this.helpers.httpRequestWithAuthentication.call(this, credentialType, {
			method: request.method,
			url: `${baseUrl}${request.path}`,
			qs: request.qs,
			body: request.body,
			json: true,
		});
	} catch (error) {
		if (missingIsUndefined && statusOf(error) === 404) return undefined;
		throw new NodeApiError(this.getNode(), error as JsonObject);
	}
}

/**
 * One call to the connector with the credential's key (the credential picks the header) and
 * base URL. An error answer becomes a NodeApiError carrying the connector's message.
 */
export async function connectorRequest(this: Context, request: ConnectorRequest): Promise<unknown> {
	return await send.call(this, request, false);
}

/** Like connectorRequest, but an answer of 404 is `undefined` (a hook already gone). */
export async function connectorRequestUnlessMissing(
	this: Context,
	request: ConnectorRequest,
): Promise<unknown> {
	return await send.call(this, request, true);
}

/** The HTTP status of a failed request, when it got an answer. */
export function statusOf(error: unknown): number | undefined {
	const candidate = error as {
		httpCode?: string;
		cause?: { status?: number; response?: { status?: number } };
	};
	const code = Number(
		candidate?.httpCode ?? candidate?.cause?.status ?? candidate?.cause?.response?.status,
	);
	return Number.isFinite(code) && code > 0 ? code : undefined;
}

/**
 * The ids a list input holds: a list of strings, or the entries of a collection of dropdowns
 * (`{ values: [{ value: { mode, value } }] }`), blanks left out.
 */
export function listValue(raw: unknown): string[] {
	const single = (item: unknown): string => {
		if (item && typeof item === 'object' && 'value' in item) {
			return single((item as { value: unknown }).value);
		}
		return item === undefined || item === null ? '' : String(item).trim();
	};
	let items: unknown[] = [];
	if (Array.isArray(raw)) items = raw;
	else if (raw && typeof raw === 'object' && Array.isArray((raw as { values?: unknown }).values)) {
		items = (raw as { values: unknown[] }).values;
	} else if (typeof raw === 'string') items = raw.split(',');
	return items.map(single).filter((value) => value !== '');
}
