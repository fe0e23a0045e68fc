import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router, type Response } from 'express';
import { projectRoot } from '../../paths.js';

/**
 * `GET /console`: the web console (docs/console.md), a single page built by `npm run build`
 * into dist/console (console/ holds its sources). The page and its assets need no key: the
 * console asks for one and sends it with each API call; nothing secret is in what is served here.
 */
export const consoleDir = join(projectRoot, 'dist', 'console');

/** The console's own pages: each answers the same document, the page picks its view from the path. */
export const consolePages = ['devices', 'dropdowns', 'webhooks', 'operator'] as const;

/**
 * Only this service's own origin: no inline script or style, no other host, no frames, no
 * plugins. `data:` images are the form controls' icons of the style sheet.
 */
export const consoleCsp = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', consoleCsp);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
}

/** Behind a proxy that adds a path prefix, PUBLIC_URL carries it (as for /docs). */
function pathPrefix(publicUrl: string | undefined): string {
  return publicUrl ? new URL(publicUrl).pathname.replace(/\/+$/, '') : '';
}

const notBuilt = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>
<body><main><h1>The console is not built</h1><p>Run <code>npm run build</code> (or <code>npm start</code>, which builds what is missing) and reload.</p></main></body></html>
`;

/**
 * The built index.html with the path prefix applied to its asset links and handed to the page
 * (a meta tag: the policy allows no inline script). Read again when the build changes, so a
 * rebuild needs no restart.
 */
function consolePage(prefix: string): () => string | null {
  const file = join(consoleDir, 'index.html');
  let cached: { mtimeMs: number; html: string } | null = null;
  return () => {
    let mtimeMs: number;
    try {
      mtimeMs = statSync(file).mtimeMs;
    } catch {
      return null;
    }
    if (cached?.mtimeMs !== mtimeMs) {
      const html = readFileSync(file, 'utf8')
        .replaceAll('"/console/assets/', `"${prefix}/console/assets/`)
        .replace('<meta name="connector-base" content="">', `<meta name="connector-base" content="${prefix}">`);
      cached = { mtimeMs, html };
    }
    return cached.html;
  };
}

function sendPage(res: Response, html: string | null): void {
  securityHeaders(res);
  res.setHeader('Cache-Control', 'no-cache');
  res
    .status(html === null ? 503 : 200)
    .type('html')
    .send(html ?? notBuilt);
}

/**
 * The console: its page (at `/console` and at each page's path, so a page can be reloaded or
 * bookmarked) and its assets. A web page, not an operation of the API: middleware rather than
 * routes, left out of the OpenAPI document as /docs' assets are.
 */
export function consoleAssets(publicUrl: string | undefined): Router {
  const router = Router();
  const page = consolePage(pathPrefix(publicUrl));
  const pagePaths = new Set(['/console', ...consolePages.map((name) => `/console/${name}`)]);
  router.use((req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !pagePaths.has(req.path)) return next();
    req.routePattern = req.path === '/console' ? '/console' : '/console/{page}';
    sendPage(res, page());
  });
  router.use(
    '/console/assets',
    (req, res, next) => {
      // The build writes no source maps; a stray one is still never served.
      if (req.path.endsWith('.map')) return next('router');
      req.routePattern = '/console/assets/*';
      securityHeaders(res);
      next();
    },
    // Names carry a content hash: a new build is a new name.
    express.static(join(consoleDir, 'assets'), { index: false, immutable: true, maxAge: '365d', fallthrough: true }),
  );
  return router;
}
