import {
	NodeApiError,
	type IDataObject,
	type IExecuteFunctions,
	type IExecuteSingleFunctions,
	type IHookFunctions,
	type IHttpRequestMethods,
	type ILoadOptionsFunctions,
	type IPollFunctions,
	type IWebhookFunctions,
	type JsonObject,
} from 'n8n-workflow';
import { timeoutMs, type ShapeCheck } from './shape';

/** The credential type every node of this package uses. */
export const credentialType = 'signageConnectorApi';

type Context =
	| IExecuteFunctions
	| IExecuteSingleFunctions
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
	/** What is wrong with a successful answer's body, or null; a problem is thrown. */
	check?: ShapeCheck;
}

/**
 * Whether a failed request got no answer in time. n8n hands it over already as a NodeApiError
 * ("The connection was aborted…", httpCode ECONNABORTED, the client's "timeout of … exceeded"
 * among its messages); a bare client error has the code itself.
 */
function timedOut(error: unknown): boolean {
	const candidate = error as {
		code?: unknown;
		httpCode?: unknown;
		message?: unknown;
		messages?: unknown;
		cause?: { code?: unknown };
	};
	const codes = [candidate?.code, candidate?.httpCode, candidate?.cause?.code];
	if (codes.some((code) => code === 'ECONNABORTED' || code === 'ETIMEDOUT')) return true;
	const listed = Array.isArray(candidate?.messages) ? (candidate.messages as unknown[]) : [];
	const messages = [candidate?.message, ...listed];
	return messages.some((message) => /timeout of \d+ms exceeded|timed out/i.test(String(message)));
}

/** The error for an answer whose shape is not the connector's. */
export function shapeError(this: Context, where: string, problem: string): NodeApiError {
	const message = `Unexpected answer from the connector to ${where}: ${problem}`;
	return new NodeApiError(this.getNode(), { message } as JsonObject, { message, httpCode: '502' });
}

async function send(this: Context, request: ConnectorRequest, missingIsUndefined: boolean): Promise<unknown> {
	const credentials = await this.getCredentials(credentialType);
	const baseUrl = String(credentials.baseUrl ?? '').replace(/\/+$/, '');
	const where = `${request.method} ${request.path}`;
	let body: unknown;
	try {
		body = await this.helpers.httpRequestWithAuthentication.call(this, credentialType, {
			method: request.method,
			url: `${baseUrl}${request.path}`,
			qs: request.qs,
			body: request.body,
			json: true,
			timeout: timeoutMs,
		});
	} catch (error) {
		if (missingIsUndefined && statusOf(error) === 404) return undefined;
		if (statusOf(error) === undefined && timedOut(error)) {
			const message = `No answer from the connector within ${timeoutMs / 1000} s (${where})`;
			throw new NodeApiError(this.getNode(), { message } as JsonObject, { message, httpCode: '504' });
		}
		throw new NodeApiError(this.getNode(), error as JsonObject);
	}
	const problem = request.check ? request.check(body) : null;
	if (problem) throw shapeError.call(this, where, problem);
	return body;
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
