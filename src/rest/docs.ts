import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Router } from 'express';
import type { SchemaSettings } from './route.ts';
import { openApiDocument } from './openapi.ts';

const swaggerDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/swagger-ui-bundle.js'));

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Messaging API v1 reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// A file of its own rather than an inline script, so a Content-Security-Policy without 'unsafe-inline' allows it.
const init = `window.ui = SwaggerUIBundle({ url: '/v1/openapi.json', dom_id: '#reference', deepLinking: true, persistAuthorization: true });\n`;

/**
 * The OpenAPI document at /v1/openapi.json and an interactive reference (Swagger UI, served from
 * node_modules, no CDN) at /docs. Both are public: they describe the API and hold no data.
 */
export const docsRouter = (settings: SchemaSettings): Router => {
  // Built on first request: buildApp runs many times in tests, and most never ask for it.
  let document: string | undefined;
  const files = { 'swagger-ui.css': 'text/css', 'swagger-ui-bundle.js': 'text/javascript' } as const;
  const router = Router()
    .get('/v1/openapi.json', (_req, res) => {
      document ??= JSON.stringify(openApiDocument(settings));
      res.type('application/json').send(document);
    })
    .get('/docs', (_req, res) => {
      res.type('html').send(page);
    })
    .get('/docs/init.js', (_req, res) => {
      res.type('text/javascript').send(init);
    });
  for (const [name, type] of Object.entries(files)) {
    router.get(`/docs/${name}`, (_req, res, next) => {
      res.type(type).sendFile(join(swaggerDir, name), { maxAge: '1d' }, (err) => err && next(err));
    });
  }
  return router;
};
