/** The parts of an event (docs/triggers.md) and of a delivery attempt (docs/webhooks.md) that the narration shows. */
export interface NarratedEvent {
  id: string;
  type: string;
  occurred_at: string;
  device: { id: string; name: string; last_heartbeat_at: string | null };
}

export interface NarratedAttempt {
  event_id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  next_attempt_at: string | null;
  outcome: string;
}

/** `14:02:07`, local time: the demo runs in a terminal next to the person watching it. */
export function clockTime(at: Date | string): string {
  const date = typeof at === 'string' ? new Date(at) : at;
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

export function describeEvent(event: NarratedEvent): string {
  const screen = `${event.device.name} (${event.device.id})`;
  if (event.type === 'device.offline') {
    const since = event.device.last_heartbeat_at ? `no heartbeat since ${clockTime(event.device.last_heartbeat_at)}` : 'it never sent a heartbeat';
    return `${screen} went offline: ${since}`;
  }
  return `${screen} is back online`;
}

/** One delivery attempt as a sentence: what was sent where, and what happens next. */
export function describeAttempt(attempt: NarratedAttempt, event: NarratedEvent | undefined, targetUrl: string): string {
  const what = event ? `${event.type} of ${event.device.name}` : `event ${attempt.event_id}`;
  const where = targetUrl.split('?')[0];
  const answer = attempt.status_code !== null ? `HTTP ${attempt.status_code}` : (attempt.error ?? 'no answer');
  switch (attempt.outcome) {
    case 'delivered':
      return `Webhook ${what} delivered to ${where} (${answer}, ${attempt.duration_ms} ms, attempt ${attempt.attempt})`;
    case 'disabled':
      return `Webhook ${what} to ${where}: the receiver answered 410 Gone, so the hook is disabled`;
    case 'dead':
      return `Webhook ${what} to ${where} failed (${answer}, attempt ${attempt.attempt}); no retries left, the delivery is dead`;
    default: {
      const next = attempt.next_attempt_at ? ` at ${clockTime(attempt.next_attempt_at)}` : '';
      return `Webhook ${what} to ${where} failed (${answer}, attempt ${attempt.attempt}); retrying${next}`;
    }
  }
}

interface Hook {
  id: string;
  target_url: string;
}

const reenrolMs = 3_600_000;

/**
 * Tells, one line at a time, what happens to the demo key: screens going offline or coming back
 * (its event log) and every webhook attempt to its hooks. It reads the connector's own API, as
 * any client would; the first call of the polling trigger makes the connector watch the key.
 * Only what happens after it starts is told.
 */
export async function startNarrator(options: { baseUrl: string; key: string; intervalMs: number; write: (line: string) => void }): Promise<() => void> {
  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${options.baseUrl}${path}`, { headers: { 'X-API-Key': options.key } });
    if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
    return (await res.json()) as T;
  };
  const say = (line: string) => options.write(`${clockTime(new Date())}  ${line}\n`);
  const events = new Map<string, NarratedEvent>();
  const seenAttempts = new Set<string>();
  let lastEventId: string | undefined;
  let enrolledAt = Date.now();

  const readEvents = async (tell: boolean) => {
    for (;;) {
      const page = await get<NarratedEvent[]>(`/v1/events?limit=500${lastEventId ? `&after=${encodeURIComponent(lastEventId)}` : ''}`);
      for (const event of page) {
        events.set(event.id, event);
        lastEventId = event.id;
        if (tell) say(describeEvent(event));
      }
      // Only deliveries name old events; a long-running demo need not remember them all.
      for (const id of events.keys()) if (events.size > 1000) events.delete(id);
      if (page.length < 500) return;
    }
  };
  const readAttempts = async (tell: boolean) => {
    for (const hook of await get<Hook[]>('/v1/hooks')) {
      const attempts = await get<NarratedAttempt[]>(`/v1/hooks/${encodeURIComponent(hook.id)}/deliveries`);
      for (const attempt of attempts.reverse()) {
        // A delivery not attempted yet has nothing to tell (the list shows each delivery's latest attempt).
        if (attempt.attempt === 0) continue;
        const seen = `${hook.id} ${attempt.event_id} ${attempt.attempt}`;
        if (seenAttempts.has(seen)) continue;
        seenAttempts.add(seen);
        if (tell) say(describeAttempt(attempt, events.get(attempt.event_id), hook.target_url));
      }
    }
  };
  await get('/v1/triggers/device-status');
  await readEvents(false);
  await readAttempts(false);
  let busy = false;
  let lastError = '';
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      if (Date.now() - enrolledAt > reenrolMs) {
        await get('/v1/triggers/device-status');
        enrolledAt = Date.now();
      }
      await readEvents(true);
      await readAttempts(true);
      lastError = '';
    } catch (err) {
      // Said once, not every second while it lasts.
      const message = (err as Error).message;
      if (message !== lastError) say(`(could not read the connector: ${message})`);
      lastError = message;
    } finally {
      busy = false;
    }
  }, options.intervalMs);
  return () => clearInterval(timer);
}
