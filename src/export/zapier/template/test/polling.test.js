'use strict';

const { describe, expect, test } = require('@jest/globals');
const { appTester, bundle, definition, operation } = require('./harness');

describe.each(definition.pollingTriggers)('polling trigger $key', (spec) => {
  test('returns events of its type, each with the id Zapier dedupes on', async () => {
    // The first call of a key enrols it with the connector's poller and may return [].
    const events = await appTester(operation(spec.key).perform, bundle());
    expect(Array.isArray(events)).toBe(true);
    for (const event of events) {
      expect(event.id).toEqual(expect.any(String));
      expect(spec.eventTypes).toContain(event.type);
    }
  });

  test("the Zap editor's test gets sample events of its type when nothing happened yet", async () => {
    const events = await appTester(operation(spec.key).perform, bundle({ meta: { isLoadingSample: true } }));
    expect(Array.isArray(events)).toBe(true);
    for (const event of events) expect(spec.eventTypes).toContain(event.type);
  });
});
