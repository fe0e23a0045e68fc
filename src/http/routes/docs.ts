import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import express, { Router } from 'express';
import type { Services } from '../../services.js';
import { buildOpenApiDocument, openApiDocument } from '../../openapi/document.js';
import { publicBaseUrl } from '../base-url.js';
import { oneKeyAuthPlugin } from '../docs-auth.js';
import { defineRoute } from '../route.js';

/**
 * `GET /openapi.json` (the OpenAPI 3.1 document, no key) and `GET /docs` (Swagger UI over it,
 * every asset served from this service: the machines it runs on may have no internet).
 */

/** swagger-ui-dist's folder, found the way Node resolves the dependency. */
const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/**
 * The files of swagger-ui-dist the page uses. Its `index.html` and `swagger-initializer.js`
 * point at the public petstore, and its source maps (1.9 MB, for debugging Swagger UI itself)
 * are of no use to a reader of the reference, so none of them is served.
 */
const servedAsset = /^\/(swagger-ui\.css|swagger-ui-bundle\.js|favicon-(16x16|32x32)\.png)$/;

/** There is no public URL to link the guides to, so the reference names them by path. */
const guides =
  'Guides, in the repository: `README.md` (start here), `docs/api.md` (keys, errors and a page per area), ' +
  '`docs/configuration.md`, `docs/datasets.md`, `docs/upstream.md` and `docs/zapier.md`.';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Behind a proxy that adds a path prefix, PUBLIC_URL carries it; links stay root-relative. */
function pathPrefix(publicUrl: string | undefined): string {
  return publicUrl ? new URL(publicUrl).pathname.replace(/\/+$/, '') : '';
}

export const getOpenApi = defineRoute({
  method: 'get',
  path: '/openapi.json',
  operationId: 'getOpenApi',
  tag: 'Service',
  summary: 'This document',
  responses: { 200: { description: 'OpenAPI 3.1.', content: { type: 'application/json', schema: { type: 'object' } } } },
  // The document of the very routes the app serves, built at its first request (about 60 ms of
  // zod-to-JSON-Schema work that an app which is never asked for it does not pay) and kept.
  setup: (services, routes) => {
    let base: ReturnType<typeof buildOpenApiDocument> | undefined;
    return () => {
      if (!base) {
        base = buildOpenApiDocument(services.manifest, routes);
        base.info = { ...(base.info as object), description: `${(base.info as { description: string }).description}\n\n${guides}` };
      }
      return base;
    };
  },
  handler({ req, res, services, state: document }) {
    res.json(openApiDocument(document(), publicBaseUrl(req, services.config.PUBLIC_URL)));
  },
});

function docsPage(services: Services): string {
  const prefix = pathPrefix(services.config.PUBLIC_URL);
  const assets = `${prefix}/docs/assets`;
  const init = {
    url: `${prefix}/openapi.json`,
    dom_id: '#swagger-ui',
    deepLinking: true,
    // Swagger UI would otherwise send the document to validator.swagger.io for a badge.
    validatorUrl: null,
    layout: 'BaseLayout',
  };
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(services.manifest.name)} — API reference</title>
<link rel="stylesheet" href="${assets}/swagger-ui.css">
<link rel="icon" type="image/png" href="${assets}/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="${assets}/favicon-16x16.png" sizes="16x16">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${assets}/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle(Object.assign(${JSON.stringify(init).replace(/</g, '\\u003c')}, {
  presets: [SwaggerUIBundle.presets.apis],
  // One key authorizes both schemes (src/http/docs-auth.ts).
  plugins: [${oneKeyAuthPlugin.toString()}],
}));
</script>
</body>
</html>
`;
}

export const docsPageRoute = defineRoute({
  method: 'get',
  path: '/docs',
  operationId: 'docsPage',
  tag: 'Service',
  summary: 'API reference page',
  description: 'This document rendered by Swagger UI, served from this service (no external assets).',
  responses: { 200: { description: 'HTML.', content: { type: 'text/html', schema: { type: 'string' } } } },
  setup: docsPage,
  handler({ res, state: page }) {
    res.type('html').send(page);
  },
});

/** The page's static files: not an operation of the API, so a router of their own rather than a route. */
export function docsAssets(): Router {
  const router = Router();
  router.use(
    '/docs/assets',
    (req, _res, next) => {
      if (!servedAsset.test(req.path)) return next('router');
      // Static files match no Express route; the access log gets this pattern, not the path.
      req.routePattern = '/docs/assets/*';
      next();
    },
    express.static(swaggerUiDir, { index: false, maxAge: '1h' }),
  );
  return router;
}
