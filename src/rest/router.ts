import express, { Router } from 'express';
import type { Request, RequestHandler } from 'express';
import type { Deps } from '../resolvers/context.ts';
import { withContext } from './context.ts';
import { errorHandler, notFoundRoute, optionsWithoutBody, refuseDeepBody, refuseNul, requireJsonBody } from './errors.ts';
import { mount } from './mount.ts';
import { routeGroups } from './routes.ts';

/**
 * Everything under /v1: the key, then body checks, then the routes. `beforeRoutes` sees each request
 * with its body parsed (several nodes: the hop to the owner of the request's session); `fromNode` tells a
 * request another node sent on, whose rate-limit unit that node took.
 */
export const restRouter = (deps: Deps, beforeRoutes?: RequestHandler, fromNode?: (req: Request) => boolean): Router => {
  const router = Router()
    .use(withContext(deps, fromNode))
    .use(refuseNul)
    .use(optionsWithoutBody)
    .use(requireJsonBody)
    // Not strict: null, 42 or "x" are JSON, so they reach validation (VALIDATION_FAILED), not INVALID_JSON.
    .use(express.json({ limit: deps.settings.BODY_LIMIT, type: 'application/json', strict: false }))
    .use(refuseDeepBody);
  if (beforeRoutes) router.use(beforeRoutes);
  for (const routes of routeGroups) router.use(mount(routes));
  return router.use(notFoundRoute).use(errorHandler(deps.logger));
};
