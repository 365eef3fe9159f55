import { Router } from 'express';
import { me } from '../resolvers/accounts.ts';
import { ctxOf } from './context.ts';

export const accountsRouter = (): Router =>
  Router().get('/accounts/me', (_req, res) => {
    res.json(me(ctxOf(res)));
  });
