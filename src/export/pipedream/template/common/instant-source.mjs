import {
  emitEvent, hookFields, matches,
} from "./events.mjs";
import { signatureProblem } from "./signature.mjs";

/**
 * The base of every instant source (spread into the generated component, which adds the app
 * prop `app`, the trigger's props and `trigger()`). Activating subscribes the source's HTTP endpoint with the connector
 * (`POST /v1/hooks`) and keeps the hook's id and secret in `this.db`; deactivating deletes it.
 * Each delivery is checked against the secret (Standard Webhooks) and its `data`, the Event,
 * is emitted with the Event's id as the dedupe key; a forged or stale delivery gets a 401.
 */
export default {
  props: {
    db: "$.service.db",
    http: {
      type: "$.interface.http",
      customResponse: true,
    },
  },
  hooks: {
    async activate() {
      // Never two hooks: one left from an earlier activation (changed props) goes first.
      await this.removeHook();
      const trigger = this.trigger();
      const hook = await this.app.createHook({
        endpoint: trigger.hook.subscribe,
        targetUrl: this.http.endpoint,
        fields: hookFields(trigger, this),
      });
      this.db.set("hook", {
        id: hook.id,
        secret: hook.secret,
      });
    },
    async deactivate() {
      await this.removeHook();
    },
  },
  methods: {
    async removeHook() {
      const hook = this.db.get("hook");
      if (!hook?.id) return;
      await this.app.deleteHook({
        endpoint: this.trigger().hook.unsubscribe,
        id: hook.id,
      });
      this.db.set("hook", null);
    },
    respond(status, message) {
      this.http.respond({
        status,
        headers: {
          "content-type": "application/json",
        },
        body: {
          message,
        },
      });
    },
  },
  async run(event) {
    const hook = this.db.get("hook");
    if (!hook?.secret) {
      // 410 tells the connector to disable a hook this source no longer holds.
      this.respond(410, "this source has no active hook");
      return;
    }
    const problem = signatureProblem(hook.secret, event.headers, event.bodyRaw);
    if (problem) {
      console.log(`Ignored a webhook delivery: ${problem}.`);
      this.respond(401, problem);
      return;
    }
    let delivery;
    try {
      delivery = JSON.parse(event.bodyRaw);
    } catch {
      this.respond(400, "the body is not JSON");
      return;
    }
    this.respond(200, "ok");
    const data = delivery?.data;
    if (matches(this.trigger(), this, data)) emitEvent(this, data);
  },
};
