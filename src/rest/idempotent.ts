import type { Request, Response } from 'express';
import { once } from '../resolvers/idempotency.ts';
import { ctxOf } from './context.ts';

type Send = (req: Request, res: Response) => Promise<unknown>;

/** Every send honours Idempotency-Key: a retry of the same request gets the first answer and sends nothing twice. */
export const idempotent =
  (send: Send) =>
  async (req: Request, res: Response): Promise<void> => {
    const ctx = ctxOf(res);
    // The path as requested, not the route pattern: a key used on one session must not answer for another.
    const path = req.originalUrl.split('?')[0] ?? req.path;
    const result = await once(ctx, req.header('idempotency-key'), { method: req.method, path, body: req.body }, async (gated) => {
      // The route reads its context from res.locals; this one carries the key's gate.
      res.locals.ctx = gated;
      return { status: 200, body: await send(req, res) };
    });
    if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
    res.status(result.status).json(result.body);
  };
