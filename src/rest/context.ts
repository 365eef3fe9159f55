import type { Request, RequestHandler, Response } from 'express';
import { authenticate, takeRequest } from '../resolvers/accounts.ts';
import type { Deps, RequestContext } from '../resolvers/context.ts';

/**
 * Authenticates the key, takes the request's rate-limit unit (once: not again on the node a request was
 * sent on to), and leaves the per-request context in res.locals for the routes.
 */
export const withContext =
  (deps: Deps, fromNode?: (req: Request) => boolean): RequestHandler =>
  async (req, res, next) => {
    const caller = await authenticate(deps, req.header('x-api-key'));
    if (!fromNode?.(req)) await takeRequest(deps, caller);
    const ctx: RequestContext = { ...deps, caller, requestId: String(req.id), logger: req.log ?? deps.logger };
    res.locals.ctx = ctx;
    next();
  };

export const ctxOf = (res: Response): RequestContext => res.locals.ctx as RequestContext;
