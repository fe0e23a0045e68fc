/**
 * What the trigger tests share: a local HTTP server standing in for the URL Make creates for a
 * webhook, the test control that makes a device go offline or come back, and waiting for the
 * connector to record an event.
 */

import { createServer } from 'node:http';
import { connectorGet, env } from './make.js';

/** A receiver on a loopback port: `url`, the deliveries it got, and `next()` for the next one. */
export async function startReceiver() {
  const deliveries = [];
  const waiters = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const delivery = { headers: req.headers, body: JSON.parse(text) };
      deliveries.push(delivery);
      res.writeHead(200).end();
      waiters.splice(0).forEach((wake) => wake());
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  // A path of its own, so that this run's hooks are told apart from any others of the key.
  const url = `http://127.0.0.1:${server.address().port}/make-webhook-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  /** The first delivery matching `accept`, waiting up to 20 s for it. */
  const next = async (accept, timeoutMs = 20_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = deliveries.find(accept);
      if (found) return found;
      if (Date.now() > until) throw new Error(`no matching delivery within ${timeoutMs} ms (got ${deliveries.length})`);
      await new Promise((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 250);
      });
    }
  };
  return { url, deliveries, next, stop: () => new Promise((resolve) => server.close(resolve)) };
}

/** Moves a device's last heartbeat so that the connector's next poll sees it offline or online. */
export async function setStatus(deviceId, status) {
  const response = await fetch(`${env.controlUrl}/devices/${encodeURIComponent(deviceId)}/${status}`, { method: 'POST' });
  if (response.status !== 204) throw new Error(`control: ${status} ${deviceId}: HTTP ${response.status}`);
}

/** Waits until the connector lists an event of `type` for the device; returns it. */
export async function recordedEvent(type, deviceId, timeoutMs = 20_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const events = await connectorGet(`/v1/triggers/device-status?type=${type}&devices=${encodeURIComponent(deviceId)}&limit=500`);
    if (events.length > 0) return events[0];
    if (Date.now() > until) throw new Error(`the connector recorded no ${type} for ${deviceId} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Every device of the key, lower-case ids as events carry them. */
export async function allDevices() {
  const { data } = await connectorGet('/devices?page_size=1000', { bearer: true });
  return data.map((device) => device.id.toLowerCase());
}

/** Online devices, lower-case ids as events carry them; tests take different ones. */
export async function onlineDevices() {
  const { data } = await connectorGet('/devices?is_online=true&page_size=1000', { bearer: true });
  return data.map((device) => device.id.toLowerCase());
}

/** The trigger id a Make module or webhook stands for: `deviceOffline` → event type `device.offline`. */
export const eventTypeOf = (webhookAttach) => webhookAttach.body.events[0];
