'use strict';

const crypto = require('crypto');
const { describe, expect, test } = require('@jest/globals');
const { appTester, bundle, definition, hookOperation, testTargetUrl: targetUrl } = require('./harness');

/**
 * A delivery as the connector sends it: Standard Webhooks headers (as Zapier renames them)
 * and an HMAC-SHA256 signature with the hook's secret, computed here independently of lib/.
 * @param {string} secret
 * @param {Record<string, unknown>} event
 */
const signedDelivery = (secret, event) => {
  const content = JSON.stringify({ type: event.type, timestamp: new Date().toISOString(), data: event });
  const id = `msg_${crypto.randomUUID()}`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signature = `v1,${crypto.createHmac('sha256', key).update(`${id}.${timestamp}.${content}`).digest('base64')}`;
  const headers = { 'Content-Type': 'application/json', 'Http-Webhook-Id': id, 'Http-Webhook-Timestamp': timestamp, 'Http-Webhook-Signature': signature };
  return { rawRequest: { method: 'POST', querystring: '', headers, content }, cleanedRequest: JSON.parse(content) };
};

describe.each(definition.hookTriggers)('REST hook $key', (spec) => {
  test('subscribes, turns a signed delivery into its event, refuses a forged one, unsubscribes', async () => {
    const trigger = hookOperation(spec.key);
    const hook = await appTester(trigger.performSubscribe, bundle({ targetUrl }));
    try {
      expect(hook).toEqual(expect.objectContaining({ id: expect.any(String), target_url: targetUrl, status: 'active', events: spec.eventTypes }));
      expect(hook.secret).toMatch(/^whsec_/);

      const event = { ...spec.sample, type: spec.eventTypes[0] };
      const delivery = signedDelivery(hook.secret, event);
      expect(await appTester(trigger.perform, bundle({ ...delivery, subscribeData: hook }))).toEqual([event]);

      const forged = { ...delivery.rawRequest, content: delivery.rawRequest.content.replace(/"id":"/, '"id":"forged-') };
      await expect(appTester(trigger.perform, bundle({ ...delivery, rawRequest: forged, subscribeData: hook }))).rejects.toThrow(/signature does not match/);
    } finally {
      expect(await appTester(trigger.performUnsubscribe, bundle({ subscribeData: hook }))).toEqual({ id: hook.id, unsubscribed: true });
    }
    // Zapier may unsubscribe twice; a hook that is gone is not an error.
    expect(await appTester(trigger.performUnsubscribe, bundle({ subscribeData: hook }))).toEqual({ id: hook.id, unsubscribed: true });
  });

  test('"load samples" returns events of its type', async () => {
    const events = await appTester(hookOperation(spec.key).performList, bundle());
    expect(Array.isArray(events)).toBe(true);
    for (const event of events) expect(spec.eventTypes).toContain(event.type);
  });
});
