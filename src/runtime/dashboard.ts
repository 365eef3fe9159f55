import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express, { Router } from 'express';
import type { Logger } from 'pino';

/**
 * The dashboard's build (Vite, from dashboard/ by `npm install` or `npm run build`). The same path from
 * src/runtime (tsx) and dist/runtime (compiled): both sit two levels under the project root.
 */
export const dashboardDir = fileURLToPath(new URL('../../dist/dashboard/', import.meta.url));

/**
 * Serves the dashboard at `/`: index.html never cached (it names the current assets), the hashed
 * assets for a year, the icon for a day. Hash routes (#/...) mean no fallback route is needed.
 */
export const dashboardRouter = (logger: Logger): Router => {
  const router = Router();
  if (!existsSync(dashboardDir)) {
    logger.warn({ dir: dashboardDir }, 'dashboard not built (npm run build); / is not served');
    return router;
  }
  router.use('/assets', express.static(`${dashboardDir}assets`, { immutable: true, maxAge: '365d', index: false, fallthrough: false }));
  // Browsers ask for /favicon.ico on every page they open, GraphiQL and /docs included.
  for (const icon of ['favicon.ico', 'favicon.svg']) {
    router.get(`/${icon}`, (_req, res, next) => {
      res.sendFile(icon, { root: dashboardDir, maxAge: '1d' }, (err) => err && next(err));
    });
  }
  router.get('/', (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile('index.html', { root: dashboardDir }, (err) => err && next(err));
  });
  return router;
};
