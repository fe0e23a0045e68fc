import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { verify, type SignedHeaders } from '../webhooks/signing.js';
import { fail } from './fail.js';

const usage = `Usage:
  npm run receiver -- --key <api key> [--connector http://localhost:3000] [--port 4000] [--events device.offline,device.online]
  npm run receiver -- --secret whsec_... [--port 4000]     (verify only; subscribe yourself)
  npm run receiver -- --help

Listens on http://127.0.0.1:<port>/hook, verifies each delivery's Standard Webhooks signature
and prints one line per event. With --key it subscribes itself (POST /v1/hooks) and
unsubscribes on Ctrl+C; with --secret it only verifies, for a hook you created yourself.
The connector must be allowed to deliver there: npm run demo allows it, or start the connector
with WEBHOOK_ALLOWED_TARGETS=http://127.0.0.1:4000 (docs/webhooks.md).`;

/**
 * A tiny webhook receiver for trying the connector out: it subscribes itself with the given
 * key (or just verifies with a given secret), checks every delivery's Standard Webhooks
 * signature, prints it, and unsubscribes on Ctrl+C. Development only: it listens on http.
 */
async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        key: { type: 'string' },
        secret: { type: 'string' },
        connector: { type: 'string', default: 'http://localhost:3000' },
        port: { type: 'string', default: '4000' },
        events: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    fail(`${(err as Error).message}\n${usage}`);
  }
  if (values.help) {
    console.log(usage);
    return;
  }
  if (!values.key && !values.secret) fail(usage);
  let secret = values.secret ?? '';
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const headers = {
      'webhook-id': String(req.headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
    } satisfies SignedHeaders;
    const ok = secret !== '' && verify(secret, headers, body, Math.floor(Date.now() / 1000));
    res.writeHead(ok ? 204 : 401).end();
    let summary = body;
    try {
      const event = JSON.parse(body) as { type: string; data: { device: { id: string; name: string }; occurred_at: string } };
      summary = `${event.type} ${event.data.device.name} (${event.data.device.id}) at ${event.data.occurred_at}`;
    } catch {
      // Not JSON: print the raw body.
    }
    console.log(`${new Date().toISOString()} ${ok ? 'verified' : 'SIGNATURE INVALID'} ${headers['webhook-id']} ${summary}`);
  });
  server.listen(Number(values.port), '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const port = (server.address() as AddressInfo).port;
  // The address it listens on: `localhost` may resolve to ::1 first, where nothing listens.
  const target = `http://127.0.0.1:${port}/hook`;
  console.log(`Receiver listening on ${target}`);
  if (!values.key) return;
  const connector = values.connector.replace(/\/+$/, '');
  const headers = { 'content-type': 'application/json', 'x-api-key': values.key };
  const events = values.events?.split(',').map((e) => e.trim());
  const created = await fetch(`${connector}/v1/hooks`, { method: 'POST', headers, body: JSON.stringify({ target_url: target, events }) }).catch((err: Error) =>
    fail(`Cannot reach the connector at ${connector}: ${(err.cause as Error | undefined)?.message ?? err.message}`),
  );
  const hook = (await created.json()) as { id?: string; secret?: string; message?: string };
  if (!created.ok || !hook.secret || !hook.id) fail(`Subscribing failed (${created.status}): ${hook.message ?? 'no hook returned'}`);
  secret = hook.secret;
  console.log(`Subscribed as ${hook.id}; waiting for device.offline / device.online deliveries (Ctrl+C to stop)…`);
  const stop = async () => {
    await fetch(`${connector}/v1/hooks/${hook.id}`, { method: 'DELETE', headers }).catch(() => undefined);
    console.log(`Unsubscribed ${hook.id}.`);
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

await main();
