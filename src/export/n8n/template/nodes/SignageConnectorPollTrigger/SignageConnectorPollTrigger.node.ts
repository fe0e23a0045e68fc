import {
	NodeConnectionTypes,
	type IDataObject,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
	type IPollFunctions,
} from 'n8n-workflow';
import { connector } from '../shared/connector';
import { searchMethods } from '../shared/properties';
import { chosenTrigger, recentEvents, sampleEvents, triggerProperties } from '../shared/triggers';

/** The most recent events read per poll (the connector's largest page). */
const window = 500;

/** What the node keeps in its static data between polls (n8n stores it with the workflow). */
interface PollState extends IDataObject {
	/** The ids of the events the last poll saw, newest first; absent before the first poll. */
	seen?: string[];
}

/**
 * The connector's triggers as polls of their polling endpoint. The first poll only records
 * what is already there; later ones emit, oldest first, each event they have not seen. The ids
 * seen live in the workflow's static data, so a restart of n8n emits nothing twice.
 */
export class SignageConnectorPollTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: `${connector.name} Poll Trigger`,
		name: 'signageConnectorPollTrigger',
		icon: { light: 'file:../../icons/signage.svg', dark: 'file:../../icons/signage.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{$parameter["trigger"]}}',
		description: 'Starts the workflow for each new device-status event, checking on a schedule',
		defaults: {
			name: `${connector.name} Poll Trigger`,
		},
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: 'signageConnectorApi',
				required: true,
			},
		],
		properties: triggerProperties(),
	};

	methods = {
		listSearch: searchMethods(),
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const trigger = chosenTrigger(this);
		if (this.getMode() === 'manual') {
			// Trying the node in the editor: the newest event, else samples; the state is untouched.
			const events = await recentEvents.call(this, trigger, 1);
			const items = events.length > 0 ? events : await sampleEvents.call(this, trigger);
			return [this.helpers.returnJsonArray(items)];
		}
		const state = this.getWorkflowStaticData('node') as PollState;
		const events = await recentEvents.call(this, trigger, window);
		const seen = state.seen ? new Set(state.seen) : undefined;
		state.seen = events.map((event) => event.id);
		if (!seen) return null;
		const fresh = events.filter((event) => !seen.has(event.id)).reverse();
		return fresh.length > 0 ? [this.helpers.returnJsonArray(fresh)] : null;
	}
}
