import type {
	IDisplayOptions,
	ILoadOptionsFunctions,
	INodeListSearchResult,
	INodeProperties,
} from 'n8n-workflow';
import { connector } from './connector';
import { listProblem, objectProblem } from './shape';
import { connectorRequest, fillPath } from './transport';
import type { OptionSourceSpec } from './types';

/** What an input of an operation or a trigger needs to become an n8n parameter. */
export interface FieldSpec {
	key: string;
	label: string;
	helpText?: string;
	type?: 'string' | 'integer' | 'boolean';
	required: boolean;
	list: boolean;
	default?: string | number | boolean;
	minimum?: number;
	maximum?: number;
	optionsFrom?: string;
	optionParams?: Record<string, string>;
}

/** Dropdown pages asked of the connector. */
const searchPageSize = 100;

function source(id: string): OptionSourceSpec {
	const found = connector.optionSources.find((candidate) => candidate.id === id);
	if (!found) throw new Error(`Unknown option source ${id}`);
	return found;
}

/** An input as an n8n parameter, shown when `show` matches. */
export function fieldProperty(field: FieldSpec, show: IDisplayOptions['show']): INodeProperties {
	const common = {
		displayName: field.label,
		name: field.key,
		description: field.helpText,
		required: field.required,
		displayOptions: { show },
	};
	if (field.optionsFrom) {
		const spec = source(field.optionsFrom);
		const dependsOn = Object.values(field.optionParams ?? {});
		const locator: INodeProperties = {
			...common,
			type: 'resourceLocator',
			default: { mode: 'list', value: '' },
			// A dropdown that searches the connector (`listSearch`), or an id typed in.
			modes: [
				{
					displayName: 'From List',
					name: 'list',
					type: 'list',
					placeholder: `Select a ${spec.title.toLowerCase()}...`,
					typeOptions: {
						searchListMethod: spec.searchMethod,
						searchable: true,
						searchFilterRequired: false,
					},
				},
				{
					displayName: 'ID',
					name: 'id',
					type: 'string',
					placeholder: `The ${spec.title.toLowerCase()}'s ID`,
				},
			],
			...(dependsOn.length > 0 ? { typeOptions: { loadOptionsDependsOn: dependsOn } } : {}),
		};
		if (!field.list) return locator;
		return {
			...common,
			required: false,
			type: 'fixedCollection',
			placeholder: `Add ${spec.title}`,
			typeOptions: { multipleValues: true },
			default: {},
			options: [
				{
					displayName: spec.title,
					name: 'values',
					values: [{ ...locator, displayName: spec.title, name: 'value', displayOptions: undefined }],
				},
			],
		};
	}
	if (field.list) {
		return {
			...common,
			type: 'string',
			typeOptions: { multipleValues: true },
			default: [],
		};
	}
	switch (field.type) {
		case 'integer':
			return {
				...common,
				type: 'number',
				typeOptions: {
					numberPrecision: 0,
					...(field.minimum !== undefined ? { minValue: field.minimum } : {}),
					...(field.maximum !== undefined ? { maxValue: field.maximum } : {}),
				},
				default: typeof field.default === 'number' ? field.default : 0,
			};
		case 'boolean':
			if (field.required) {
				return { ...common, type: 'boolean', default: field.default === true };
			}
			// Left empty means "either": a boolean parameter cannot be empty, a choice can.
			return {
				...common,
				type: 'options',
				options: [
					{ name: 'Any', value: '' },
					{ name: 'Yes', value: 'true' },
					{ name: 'No', value: 'false' },
				],
				default: field.default === undefined ? '' : String(field.default),
			};
		default:
			return {
				...common,
				type: 'string',
				default: typeof field.default === 'string' ? field.default : '',
			};
	}
}

/**
 * The value of the input that fills a dropdown's path parameter (`menuId` of the groups
 * dropdown ← the chosen menu): the input of the node's current operation that names this
 * dropdown says which one, else the parameter in snake case.
 */
function paramValue(this: ILoadOptionsFunctions, spec: OptionSourceSpec, param: string): string {
	let operation: unknown;
	try {
		operation = this.getCurrentNodeParameter('operation');
	} catch {
		operation = undefined;
	}
	const input = connector.operations
		.find((candidate) => candidate.id === operation)
		?.inputs.find((candidate) => candidate.optionsFrom === spec.id && candidate.optionParams[param]);
	const from = input?.optionParams[param] ?? param.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
	const value = this.getCurrentNodeParameter(from, { extractValue: true });
	if (value === undefined || value === null) return '';
	if (typeof value === 'object' && 'value' in value) return String((value as { value: unknown }).value ?? '');
	return String(value);
}

/** One page of a dropdown, searched on the connector (`q`) and paged with its cursor. */
async function searchOptions(
	this: ILoadOptionsFunctions,
	spec: OptionSourceSpec,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const values: Record<string, string> = {};
	for (const param of spec.params) {
		values[param.name] = paramValue.call(this, spec, param.name);
		// A dependent dropdown is empty until what it depends on is chosen.
		if (values[param.name] === '') return { results: [] };
	}
	const qs: Record<string, string | number> = { format: 'n8n', limit: searchPageSize };
	if (filter) qs.q = filter;
	if (paginationToken) qs.cursor = paginationToken;
	const answer = (await connectorRequest.call(this, {
		method: 'GET',
		path: fillPath(spec.path, values),
		qs,
		// `{results: [{name, value}], paginationToken?}`: anything else is not an empty dropdown.
		check: (body) =>
			objectProblem(body) ??
			listProblem((body as { results?: unknown }).results, ['value', 'name']),
	})) as INodeListSearchResult;
	return {
		results: answer.results,
		...(answer.paginationToken ? { paginationToken: answer.paginationToken } : {}),
	};
}

type SearchMethod = (
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
) => Promise<INodeListSearchResult>;

/** One `listSearch` method per dropdown of the connector. */
export function searchMethods(): Record<string, SearchMethod> {
	const methods: Record<string, SearchMethod> = {};
	for (const spec of connector.optionSources) {
		methods[spec.searchMethod] = async function (this: ILoadOptionsFunctions, filter, token) {
			return await searchOptions.call(this, spec, filter, token);
		};
	}
	return methods;
}
