import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The console's build (docs/console.md): console/ → dist/console, served by the connector under
 * /console. No source maps, no inline script or style (the page's Content-Security-Policy allows
 * only its own origin), every asset a file of its own.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    sourcemap: false,
    // Images and fonts as files, never data: URLs inlined into scripts or styles.
    assetsInlineLimit: 0,
    // The polyfill would be an inline script; every browser the console supports has modulepreload.
    modulePreload: { polyfill: false },
    target: 'es2022',
    chunkSizeWarningLimit: 300,
  },
});
