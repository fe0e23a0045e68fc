import {
	NodeConnectionTypes,
	type IDataObject,
	type IHookFunctions,
	type INodeType,
	type INodeTypeDescription,
	type IWebhookFunctions,
	type IWebhookResponseData,
} from 'n8n-workflow';
import { connector } from '../shared/connector';
import { searchMethods } from '../shared/properties';
import { signatureProblem } from '../shared/signature';
import { objectProblem } from '../shared/shape';
import { connectorRequest, connectorRequestUnlessMissing, fillPath } from '../shared/transport';
import { chosenTrigger, triggerInputs, triggerProperties } from '../shared/triggers';

/** What the node keeps in its static data while the workflow is active. */
interface HookState extends IDataObject {
	hookId?: string;
	secret?: string;
}

/**
 * The connector's triggers as webhooks: activating the workflow subscribes a hook to this
 * node's URL (checked first, so there is never a second one), deactivating deletes it. Each
 * delivery is checked against the hook's secret and starts the workflow with the Event.
 */
export class SignageConnectorTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: `${connector.name} Trigger`,
		name: 'signageConnectorTrigger',
		icon: { light: 'file:../../icons/signage.svg', dark: 'file:../../icons/signage.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{$parameter["trigger"]}}',
		description: 'Starts the workflow when the connector delivers a device-status event',
		defaults: {
			name: `${connector.name} Trigger`,
		},
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: 'signageConnectorApi',
				required: true,
			},
		],
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				path: 'webhook',
			},
		],
		properties: triggerProperties(),
	};

	methods = {
		listSearch: searchMethods(),
	};

	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				const state = this.getWorkflowStaticData('node') as HookState;
				if (!state.hookId) return false;
				const trigger = chosenTrigger(this);
				const hook = (await connectorRequestUnlessMissing.call(this, {
					method: 'GET',
					path: fillPath(trigger.hook.unsubscribe.path, { id: state.hookId }),
				})) as IDataObject | undefined;
				if (hook && hook.target_url === this.getNodeWebhookUrl('default') && hook.status !== 'disabled') {
					return true;
				}
				// Gone, or no longer this node's (its URL changed): remove it and forget it, so that
				// n8n creates the one hook this node should have.
				if (hook) {
					await connectorRequestUnlessMissing.call(this, {
						method: trigger.hook.unsubscribe.method,
						path: fillPath(trigger.hook.unsubscribe.path, { id: state.hookId }),
					});
				}
				delete state.hookId;
				delete state.secret;
				return false;
			},

			async create(this: IHookFunctions): Promise<boolean> {
				const trigger = chosenTrigger(this);
				const inputs = triggerInputs(this, trigger);
				const body: IDataObject = {
					...(trigger.hook.subscribe.body ?? {}),
					target_url: this.getNodeWebhookUrl('default'),
				};
				for (const field of trigger.inputFields) {
					if (field.hookField && inputs[field.key] !== undefined) body[field.hookField] = inputs[field.key];
				}
				const hook = (await connectorRequest.call(this, {
					method: trigger.hook.subscribe.method,
					path: fillPath(trigger.hook.subscribe.path, {}),
					body,
					// Its id (to delete it) and secret (to check deliveries).
					check: (answer) => objectProblem(answer, ['id', 'secret']),
				})) as IDataObject;
				const state = this.getWorkflowStaticData('node') as HookState;
				state.hookId = String(hook.id);
				state.secret = String(hook.secret);
				return true;
			},

			async delete(this: IHookFunctions): Promise<boolean> {
				const state = this.getWorkflowStaticData('node') as HookState;
				if (state.hookId) {
					const trigger = chosenTrigger(this);
					// Already gone (404) is what deleting wants.
					await connectorRequestUnlessMissing.call(this, {
						method: trigger.hook.unsubscribe.method,
						path: fillPath(trigger.hook.unsubscribe.path, { id: state.hookId }),
					});
				}
				delete state.hookId;
				delete state.secret;
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const state = this.getWorkflowStaticData('node') as HookState;
		const request = this.getRequestObject() as ReturnType<IWebhookFunctions['getRequestObject']> & {
			rawBody?: Buffer;
		};
		const body = this.getBodyData();
		const raw = request.rawBody ? request.rawBody.toString('utf8') : JSON.stringify(body);
		if (signatureProblem(state.secret ?? '', this.getHeaderData() as Record<string, unknown>, raw) !== null) {
			const response = this.getResponseObject();
			response.status(401).json({ message: 'The delivery is not signed with this hook\'s secret' });
			return { noWebhookResponse: true };
		}
		const event = (body.data ?? {}) as IDataObject;
		return { workflowData: [this.helpers.returnJsonArray([event])] };
	}
}
