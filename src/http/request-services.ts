import type { Response } from 'express';
import type { Services } from '../services.js';
import { waitsOf, type RequestWaits } from '../db/wait-budget.js';

/** The services a handler reaches the database through, each with its request view (`within`). */
const scoped = ['db', 'hooks', 'keyStore', 'eventLog', 'watches', 'directory', 'hookOps', 'devices', 'menus'] as const;
type Scoped = (typeof scoped)[number];

interface RequestScope {
  res: Response;
  views: Partial<Pick<Services, Scoped>> | null;
}
const scopeOf = Symbol('request');

/**
 * The services as one request's handler sees them: the stores above are their request views,
 * so the request's database waits share its one deadline (db/wait-budget.ts); everything else
 * is the services themselves. Per request, one small object; a view is made only when used.
 */
export function requestServices(services: Services): (res: Response) => Services {
  const descriptors: PropertyDescriptorMap = {};
  for (const name of scoped) {
    descriptors[name] = {
      get(this: { [scopeOf]: RequestScope }) {
        const scope = this[scopeOf];
        const views = (scope.views ??= {});
        const service: { within?(waits: RequestWaits): unknown } = services[name];
        // A service replaced by one without a request view (a test's stand-in) is used as it is.
        return (views[name] ??= (service.within ? service.within(waitsOf(scope.res)) : service) as never);
      },
    };
  }
  const shared = Object.create(services, descriptors) as Services;
  return (res) => {
    const view = Object.create(shared) as Services & { [scopeOf]: RequestScope };
    view[scopeOf] = { res, views: null };
    return view;
  };
}
