/**
 * The shape of `connector.ts`, the part of this package generated from the connector's
 * manifest: its operations, dropdowns (option sources) and triggers. Everything else in the
 * package reads them from there, so a re-export with a new operation, dropdown or trigger
 * needs no change in the code. The parts taken from the manifest as they are have the
 * manifest's own types (manifest.ts, generated from its schema).
 */

import type { Endpoint, OperationInput, OperationPaging, OperationRequest, OperationResult, TriggerInput } from './manifest';

export type { Endpoint };

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

/** `optionParams`: path parameter of the option source → the input that supplies it. */
export type InputSpec = OperationInput;

export interface OperationSpec {
	id: string;
	title: string;
	description: string;
	noun: string;
	request: Omit<OperationRequest, 'auth'>;
	inputs: InputSpec[];
	result: OperationResult;
	paging?: OperationPaging;
}

export type TriggerInputSpec = TriggerInput;

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
