import {
  isEmpty, toList,
} from "./connector.mjs";

/**
 * What the instant and the polling source share: the trigger's filters (its props), applied
 * to the hook the connector makes or to the events read from the log, and the emit itself.
 */

/** The hook fields of the trigger's props (`device_ids`), for `POST /v1/hooks`. */
export function hookFields(trigger, component) {
  const fields = {};
  for (const input of trigger.inputs) {
    if (!input.hookField) continue;
    const value = input.list
      ? toList(component[input.key])
      : component[input.key];
    if (!isEmpty(value)) fields[input.hookField] = value;
  }
  return fields;
}

/** The polling endpoint's query parameters of the trigger's props (lists joined by commas). */
export function pollingParams(trigger, component) {
  const params = {};
  for (const input of trigger.inputs) {
    if (!input.pollingParam) continue;
    const value = input.list
      ? toList(component[input.key]).join(",")
      : component[input.key];
    if (!isEmpty(value)) params[input.pollingParam] = String(value);
  }
  return params;
}

/**
 * Whether an event belongs to the trigger: one of its types and, when the prop the connector
 * filters on as `devices` is set, one of those devices (the log the polling source reads is
 * not filtered; the connector compares device ids case-insensitively, and so does this).
 */
export function matches(trigger, component, event) {
  if (!event || typeof event !== "object" || !trigger.eventTypes.includes(event.type)) return false;
  const devices = trigger.inputs.find((input) => input.pollingParam === "devices");
  const wanted = devices
    ? toList(component[devices.key]).map((id) => id.toLowerCase())
    : [];
  return wanted.length === 0 || wanted.includes(String(event.device?.id ?? "").toLowerCase());
}

/** Emits the Event itself, deduplicated on its id (the same transition always has the same id). */
export function emitEvent(component, event) {
  const ts = Date.parse(event.occurred_at);
  component.$emit(event, {
    id: event.id,
    summary: `${event.type}: ${event.device?.name ?? event.device?.id ?? "device"}`,
    ts: Number.isFinite(ts)
      ? ts
      : Date.now(),
  });
}
