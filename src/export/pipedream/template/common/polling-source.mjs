import { DEFAULT_POLLING_SOURCE_TIMER_INTERVAL } from "@pipedream/platform";
import {
  emitEvent, matches, pollingParams,
} from "./events.mjs";
import { listProblem } from "./shape.mjs";

/** Events are objects with the id they are deduplicated on and their type. */
const checkEvents = (body) => listProblem(body, [
  "id",
  "type",
]);

/**
 * The base of every polling source (spread into the generated component, which adds the app
 * prop `app`, the trigger's props and `trigger()`). On each timer tick
 * it reads the connector's event log (`GET /v1/events`, oldest first) after the cursor it keeps
 * in `this.db`, and emits the trigger's events, each once. The first run only records where the
 * log ends (the baseline). Every run also calls the trigger's polling endpoint, which keeps the
 * key watched by the connector's poller.
 */

/** The connector's replayable event log, read in pages of this size. */
const EVENT_LOG = {
  path: "/v1/events",
  pageSize: 500,
};

export default {
  props: {
    db: "$.service.db",
    timer: {
      type: "$.interface.timer",
      default: {
        intervalSeconds: DEFAULT_POLLING_SOURCE_TIMER_INTERVAL,
      },
    },
  },
  methods: {
    /** Every event after `after` (an event id, or none for the whole log), oldest first. */
    async eventsAfter(after) {
      const events = [];
      let cursor = after;
      for (;;) {
        const page = await this.app._request({
          path: EVENT_LOG.path,
          params: {
            after: cursor ?? undefined,
            limit: EVENT_LOG.pageSize,
          },
          check: checkEvents,
        });
        const batch = page;
        events.push(...batch);
        if (batch.length < EVENT_LOG.pageSize) return events;
        cursor = batch[batch.length - 1].id;
      }
    },
    /** Reads the log after the cursor; a cursor that left the log (7 days) starts a new baseline. */
    async newEvents(state) {
      try {
        return await this.eventsAfter(state.after);
      } catch (err) {
        if (err.status !== 400 || !state.after) throw err;
        console.log("The cursor event left the connector's log; recording a new baseline.");
        return null;
      }
    },
  },
  async run() {
    const trigger = this.trigger();
    // Enrols the key with the connector's poller (and keeps it enrolled).
    await this.app.get({
      endpoint: trigger.polling,
      params: {
        ...pollingParams(trigger, this),
        limit: 1,
      },
      check: checkEvents,
    });
    const state = this.db.get("cursor");
    const events = state
      ? await this.newEvents(state)
      : null;
    if (events === null) {
      const all = await this.eventsAfter(undefined);
      this.db.set("cursor", {
        after: all.length > 0
          ? all[all.length - 1].id
          : null,
      });
      return;
    }
    for (const event of events) {
      if (matches(trigger, this, event)) emitEvent(this, event);
    }
    if (events.length > 0) this.db.set("cursor", {
      after: events[events.length - 1].id,
    });
  },
};
