import {
	NodeApiError,
	type DeclarativeRestApiSettings,
	type IDataObject,
	type IExecutePaginationFunctions,
	type IExecuteSingleFunctions,
	type IHttpRequestOptions,
	type IN8nHttpFullResponse,
	type INodeExecutionData,
	type INodeProperties,
	type INodePropertyOptions,
	type JsonObject,
} from 'n8n-workflow';
import { connector } from './connector';
import { fieldProperty } from './properties';
import { recordsProblem, timeoutMs } from './shape';
import { fillPath, listValue, shapeError } from './transport';
import type { InputSpec, OperationSpec } from './types';

function operationOf(context: IExecuteSingleFunctions | IExecutePaginationFunctions): OperationSpec {
	const id = context.getNodeParameter('operation') as string;
	const operation = connector.operations.find((candidate) => candidate.id === id);
	if (!operation) throw new Error(`Unknown operation ${id}`);
	return operation;
}

function inputValue(context: IExecuteSingleFunctions, input: InputSpec): string {
	const raw = context.getNodeParameter(input.key, input.default ?? '', { extractValue: true });
	if (input.list) return listValue(raw).join(',');
	if (raw === undefined || raw === null) return '';
	if (typeof raw === 'object' && 'value' in raw) return String((raw as { value: unknown }).value ?? '');
	return String(raw).trim();
}

/**
 * Before the request: path inputs fill the path, query inputs become query parameters (lists
 * comma-separated; empty ones are left out).
 */
async function sendInputs(
	this: IExecuteSingleFunctions,
	requestOptions: IHttpRequestOptions,
): Promise<IHttpRequestOptions> {
	const operation = operationOf(this);
	const pathValues: Record<string, string> = {};
	const qs: IDataObject = { ...operation.request.query, ...(requestOptions.qs ?? {}) };
	for (const input of operation.inputs) {
		if (input.in === 'paging') continue;
		const value = inputValue(this, input);
		if (input.in === 'path') pathValues[input.key] = value;
		else if (value !== '') qs[input.param ?? input.key] = value;
	}
	// The bound goes on the request itself: n8n passes these options to its HTTP client, which
	// otherwise waits 300 s (a `timeout` in `routing.request` is not handed on).
	return { ...requestOptions, url: fillPath(operation.request.path, pathValues), qs, timeout: timeoutMs };
}

/**
 * After the answer: the records it holds, one item each (`result.items` names the array; a
 * single-record operation picks its one record, and none is the operation's not-found error).
 */
async function receiveRecords(
	this: IExecuteSingleFunctions,
	_items: INodeExecutionData[],
	response: IN8nHttpFullResponse,
): Promise<INodeExecutionData[]> {
	const operation = operationOf(this);
	// Records with an id where the operation says: a proxy's page or an object where a list
	// belongs is an error, never no items.
	const problem = recordsProblem(response.body, operation.result.items, operation.result.single);
	if (problem) throw shapeError.call(this, `${operation.request.method} ${operation.request.path}`, problem);
	const body = response.body as IDataObject | IDataObject[];
	const { items } = operation.result;
	let records: IDataObject[];
	if (items === undefined) records = Array.isArray(body) ? body : [body];
	else records = ((body as IDataObject)[items] as IDataObject[] | undefined) ?? [];
	if (operation.result.single) {
		if (records.length === 0) {
			const message = operation.result.notFound ?? `${operation.noun} not found`;
			throw new NodeApiError(this.getNode(), { message } as JsonObject, {
				message,
				httpCode: '404',
			});
		}
		records = records.slice(0, 1);
	}
	return records.map((json) => ({ json }));
}

/**
 * Page-numbered lists: every page is read, `page` 1, 2, … of the largest size the connector
 * allows (or the limit when smaller), until the limit is reached or a page comes back short.
 */
async function readPages(
	this: IExecutePaginationFunctions,
	requestData: DeclarativeRestApiSettings.ResultOptions,
): Promise<INodeExecutionData[]> {
	const operation = operationOf(this);
	const paging = operation.paging!;
	const limitInput = operation.inputs.find((input) => input.key === paging.limitInput);
	const limit = Number(this.getNodeParameter(paging.limitInput, limitInput?.default ?? paging.maxSize));
	const size = Math.max(1, Math.min(limit, paging.maxSize));
	const records: INodeExecutionData[] = [];
	for (let page = 1; records.length < limit; page++) {
		requestData.options.qs = { ...(requestData.options.qs ?? {}), [paging.page]: page, [paging.size]: size };
		const batch = await this.makeRoutingRequest(requestData);
		records.push(...batch);
		if (batch.length < size) break;
	}
	return records.slice(0, limit);
}

function operationOption(operation: OperationSpec): INodePropertyOptions {
	return {
		name: operation.title,
		value: operation.id,
		description: operation.description,
		action: operation.title,
		routing: {
			request: { method: operation.request.method, url: operation.request.path },
			// `paginate` hands the request to `readPages` (n8n calls it only when it is set).
			send: { preSend: [sendInputs], ...(operation.paging ? { paginate: true } : {}) },
			output: { postReceive: [receiveRecords] },
			...(operation.paging ? { operations: { pagination: readPages } } : {}),
		},
	};
}

/** The `operation` selector (its values are the operation ids) and every operation's inputs. */
export function operationProperties(): INodeProperties[] {
	const defaultOperation = connector.operations[0]?.id ?? '';
	const selector: INodeProperties = {
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		options: connector.operations.map(operationOption),
		default: defaultOperation,
	};
	const inputs = connector.operations.flatMap((operation) =>
		operation.inputs.map((input) => fieldProperty(input, { operation: [operation.id] })),
	);
	return [selector, ...inputs];
}
