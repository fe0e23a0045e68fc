import type { Route } from '../http/route.js';
import { schemaRef, WebhookDelivery } from '../http/responses.js';
import type { Json, OperationSpec } from './operation.js';

/**
 * Every operation of the service, as data: one per route, taken from the route declarations
 * the app's Express routes are built from (`http/routes/`), and the webhook the service sends.
 * test/integration/openapi.test.ts checks the document against the routes Express has.
 */

/** What the document says of a route: its declaration without the handler and what serves it. */
export function operations(routes: readonly Route[]): OperationSpec[] {
  return routes.map(
    ({ method, path, operationId, tag, summary, description, auth, admin, params, query, extraParameters, body, bodyOptional, responses, errors }) => ({
      method,
      path,
      operationId,
      tag,
      summary,
      description,
      auth: auth && { headers: auth.headers, scopes: auth.scopes },
      admin,
      params,
      query,
      extraParameters,
      body,
      bodyOptional,
      responses,
      errors,
    }),
  );
}

const webhookHeader = (name: string, description: string): Json => ({ name, in: 'header', required: true, description, schema: { type: 'string' } });

/** Deliveries the service sends (OpenAPI 3.1 `webhooks`). */
export const webhooks = (): Json => ({
  deviceStatus: {
    post: {
      operationId: 'deviceStatusWebhook',
      tags: ['Webhooks'],
      summary: 'A device went offline or came back online',
      description:
        'POSTed to a hook’s `target_url`, signed per the Standard Webhooks specification: `webhook-signature` is `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the bytes of the hook’s `secret`. Redirects are not followed.',
      parameters: [
        webhookHeader('webhook-id', 'The same on every retry of one event to one hook: dedupe on it.'),
        webhookHeader('webhook-timestamp', 'Unix seconds of this attempt.'),
        webhookHeader('webhook-signature', '`v1,<base64 signature>`.'),
      ],
      // The receiver authenticates the sender by the signature headers, not a security scheme.
      security: [],
      requestBody: { required: true, content: { 'application/json': { schema: schemaRef(WebhookDelivery) } } },
      responses: {
        '2XX': { description: 'Delivered; never sent again.' },
        '410': { description: 'The hook is disabled and gets nothing more.' },
        default: {
          description:
            'Anything else (or a timeout) is retried per `WEBHOOK_RETRY_SCHEDULE_MS` or a longer `Retry-After`; after the last retry the delivery is dead.',
        },
      },
    },
  },
});
