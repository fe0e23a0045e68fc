import { NodeConnectionTypes, type INodeType, type INodeTypeDescription } from 'n8n-workflow';
import { connector } from '../shared/connector';
import { operationProperties } from '../shared/operations';
import { searchMethods } from '../shared/properties';

/**
 * The connector's read operations (declarative: n8n makes the requests from each operation's
 * `routing`), with every dropdown searching the connector.
 */
export class SignageConnector implements INodeType {
	description: INodeTypeDescription = {
		displayName: connector.name,
		name: 'signageConnector',
		icon: { light: 'file:../../icons/signage.svg', dark: 'file:../../icons/signage.dark.svg' },
		group: ['input'],
		version: 1,
		subtitle: '={{$parameter["operation"]}}',
		description: connector.description,
		defaults: {
			name: connector.name,
		},
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: 'signageConnectorApi',
				required: true,
			},
		],
		requestDefaults: {
			baseURL: '={{String($credentials.baseUrl).replace(/\\/+$/, "")}}',
			headers: {
				Accept: 'application/json',
			},
		},
		properties: operationProperties(),
	};

	methods = {
		listSearch: searchMethods(),
	};
}
