// Generated from the connector manifest schema (src/manifest/schema.ts) by `npm run export:shared`; do not edit.

/** One connector call: `{name}` segments of the path are filled from input values. */
export interface Endpoint {
	method: 'GET' | 'POST' | 'DELETE';
	path: string;
	query?: Record<string, string>;
	body?: Record<string, unknown>;
}

/** An operation's request; `auth` names the header its key goes in. */
export interface OperationRequest {
	method: 'GET';
	path: string;
	auth: 'api_key' | 'bearer';
	query: Record<string, string>;
}

/** How one operation input reaches the request, and the dropdown that fills it. */
export interface OperationInput {
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
	optionParams: Record<string, string>;
}

/** Where an operation's answer holds its records. */
export interface OperationResult {
	items?: string;
	single: boolean;
	notFound?: string;
}

/** A page-numbered list: every page is read until the limit input is reached or the list ends. */
export interface OperationPaging {
	page: string;
	size: string;
	maxSize: number;
	total: string;
	limitInput: string;
}

/** A trigger input: the polling query parameter and the hook body field that carry its value. */
export interface TriggerInput {
	key: string;
	label: string;
	helpText?: string;
	required: boolean;
	list: boolean;
	optionsFrom?: string;
	pollingParam?: string;
	hookField?: string;
}
