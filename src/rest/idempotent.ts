import type { Request, Response } from 'express';
import { once } from '../resolvers/idempotency.ts';
import { ctxOf } from './context.ts';

type Send = (req: Request, res: Response) => Promise<unknown>;

/** Every send honours Idempotency-Key: a retry gets the first answer and sends nothing twice. */
export const idempotent =
  (send: Send) =>
  async (req: Request, res: Response): Promise<void> => {
    const ctx = ctxOf(res);
    const result = await once(ctx, req.header('idempotency-key'), `${req.method} ${req.route?.path ?? req.path}`, async () => ({
      status: 200,
      body: await send(req, res),
    }));
    if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
    res.status(result.status).json(result.body);
  };

