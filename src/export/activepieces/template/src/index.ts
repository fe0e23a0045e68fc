import { createPiece } from '@activepieces/pieces-framework';
import { definition } from './definition';
import { actions } from './lib/actions';
import { signageAuth } from './lib/auth';
import { triggers } from './lib/triggers';

/**
 * The Signage Connector piece: its auth, actions and triggers all come from `definition.ts`,
 * which the connector's exporter generates from its manifest.
 */
export const signageConnector = createPiece({
  displayName: definition.name,
  description: definition.description,
  logoUrl: 'https://cdn.activepieces.com/pieces/webhook.svg',
  authors: [],
  auth: signageAuth,
  actions,
  triggers,
});

export { definition };
