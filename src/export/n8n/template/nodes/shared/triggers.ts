import type {
	IDataObject,
	IHookFunctions,
	INodeProperties,
	IPollFunctions,
	IWebhookFunctions,
} from 'n8n-workflow';
import { connector } from './connector';
import { fieldProperty } from './properties';
import { listProblem } from './shape';
import { connectorRequest, fillPath, listValue } from './transport';

/** Events, each with the id it is deduplicated on and its type. */
const checkEvents = (body: unknown) => listProblem(body, ['id', 'type']);
import type { TriggerSpec } from './types';

/** The `trigger` selector (its values are the trigger ids) and every trigger's inputs. */
export function triggerProperties(): INodeProperties[] {
	const defaultTrigger = connector.triggers[0]?.id ?? '';
	const selector: INodeProperties = {
		displayName: 'Trigger',
		name: 'trigger',
		type: 'options',
		noDataExpression: true,
		options: connector.triggers.map((trigger) => ({
			name: trigger.title,
			value: trigger.id,
			description: trigger.description,
		})),
		default: defaultTrigger,
	};
	const inputs = connector.triggers.flatMap((trigger) =>
		trigger.inputFields.map((field) => fieldProperty(field, { trigger: [trigger.id] })),
	);
	return [selector, ...inputs];
}

type TriggerContext = IHookFunctions | IPollFunctions | IWebhookFunctions;

export function chosenTrigger(context: TriggerContext): TriggerSpec {
	const id = context.getNodeParameter('trigger') as string;
	const trigger = connector.triggers.find((candidate) => candidate.id === id);
	if (!trigger) throw new Error(`Unknown trigger ${id}`);
	return trigger;
}

/** Each input's value, as a list of ids or one string, by input key; empty inputs left out. */
export function triggerInputs(context: TriggerContext, trigger: TriggerSpec): Record<string, string | string[]> {
	const values: Record<string, string | string[]> = {};
	for (const field of trigger.inputFields) {
		const raw = context.getNodeParameter(field.key, field.list ? {} : '');
		if (field.list) {
			const list = listValue(raw);
			if (list.length > 0) values[field.key] = list;
		} else {
			const value = listValue([raw])[0];
			if (value !== undefined) values[field.key] = value;
		}
	}
	return values;
}

/** An Event of the connector: `{ id, type, occurred_at, device, previous_status, status }`. */
export type Event = IDataObject & { id: string; type: string };

/**
 * The trigger's recent events from its polling endpoint (newest first), for its inputs.
 * `limit`: how many at most.
 */
export async function recentEvents(
	this: IPollFunctions | IHookFunctions,
	trigger: TriggerSpec,
	limit: number,
): Promise<Event[]> {
	const inputs = triggerInputs(this, trigger);
	const qs: IDataObject = { ...trigger.polling.query, limit };
	for (const field of trigger.inputFields) {
		const value = inputs[field.key];
		if (field.pollingParam && value !== undefined) {
			qs[field.pollingParam] = Array.isArray(value) ? value.join(',') : value;
		}
	}
	const answer = await connectorRequest.call(this, {
		method: trigger.polling.method,
		path: fillPath(trigger.polling.path, {}),
		qs,
		check: checkEvents,
	});
	return answer as Event[];
}

/** Sample events of the trigger's types, built by the connector from the key's own devices. */
export async function sampleEvents(this: IPollFunctions | IHookFunctions, trigger: TriggerSpec): Promise<Event[]> {
	const answer = await connectorRequest.call(this, {
		method: trigger.hook.sample.method,
		path: fillPath(trigger.hook.sample.path, {}),
		qs: trigger.hook.sample.query,
		check: checkEvents,
	});
	const events = answer as Event[];
	return events.filter((event) => trigger.eventTypes.includes(String(event.type)));
}
