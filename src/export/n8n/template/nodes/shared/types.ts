/**
 * The shape of `connector.ts`, the part of this package generated from the connector's
 * manifest: its operations, dropdowns (option sources) and triggers. Everything else in the
 * package reads them from there, so a re-export with a new operation, dropdown or trigger
 * needs no change in the code.
 */

export interface Endpoint {
	method: 'GET' | 'POST' | 'DELETE';
	path: string;
	query?: Record<string, string>;
	body?: Record<string, unknown>;
}

export interface OptionSourceSpec {
	id: string;
	title: string;
	description?: string;
	/** `GET` path of the option list, with `{param}` segments. */
	path: string;
	/** Path parameters, each filled from another dropdown (`menuId` from the menus). */
	params: Array<{ name: string; title: string; optionsFrom?: string }>;
	/** The `listSearch` method that serves this dropdown. */
	searchMethod: string;
}

export interface InputSpec {
	key: string;
	label: string;
	helpText?: string;
	type: 'string' | 'integer' | 'boolean';
	required: boolean;
	list: boolean;
	in: 'path' | 'query' | 'paging';
	param?: string;
	default?: string | number | boolean;
	minimum?: number;
	maximum?: number;
	optionsFrom?: string;
	/** Path parameter of the option source → the input that supplies it. */
	optionParams: Record<string, string>;
}

export interface OperationSpec {
	id: string;
	title: string;
	description: string;
	noun: string;
	request: { method: 'GET'; path: string; query: Record<string, string> };
	inputs: InputSpec[];
	result: { items?: string; single: boolean; notFound?: string };
	paging?: { page: string; size: string; maxSize: number; total: string; limitInput: string };
}

export interface TriggerInputSpec {
	key: string;
	label: string;
	helpText?: string;
	required: boolean;
	list: boolean;
	optionsFrom?: string;
	pollingParam?: string;
	hookField?: string;
}

export interface TriggerSpec {
	id: string;
	title: string;
	description: string;
	eventTypes: string[];
	inputFields: TriggerInputSpec[];
	polling: Endpoint;
	hook: { subscribe: Endpoint; unsubscribe: Endpoint; list: Endpoint; sample: Endpoint };
	sample: Record<string, unknown>;
}

export interface ConnectorSpec {
	name: string;
	description: string;
	/** The base URL given at export: the credential's default. */
	baseUrl: string;
	auth: { test: Endpoint; connectionLabel?: string };
	optionSources: OptionSourceSpec[];
	operations: OperationSpec[];
	triggers: TriggerSpec[];
}
