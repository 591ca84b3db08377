import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The inbox page: plain TypeScript and CSS, built into web/dist, which
// src/page/web-page.ts serves at `/` under a strict Content-Security-Policy
// (so nothing inline: no inline scripts, styles or preload polyfill).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: false,
  },
});
