import type { RequestHandler, Response } from 'express';
import { authenticate, takeRequest } from '../resolvers/accounts.ts';
import type { Deps, RequestContext } from '../resolvers/context.ts';

/** Authenticates the key and leaves the per-request context in res.locals for the routes. */
export const withContext =
  (deps: Deps): RequestHandler =>
  async (req, res, next) => {
    const caller = await authenticate(deps, req.header('x-api-key'));
    await takeRequest(deps, caller);
    const ctx: RequestContext = { ...deps, caller, requestId: String(req.id), logger: req.log ?? deps.logger };
    res.locals.ctx = ctx;
    next();
  };

export const ctxOf = (res: Response): RequestContext => res.locals.ctx as RequestContext;
