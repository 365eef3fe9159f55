import { Router } from 'express';
import { scheduleStatus, sendStatus, startRecurringStatus } from '../resolvers/statuses.ts';
import { ctxOf } from './context.ts';
import { idempotent } from './idempotent.ts';
import { sessionParam } from './messages.ts';

export const statusesRouter = (): Router =>
  Router()
    .post(
      '/sessions/:sessionId/status/send',
      idempotent((req, res) => sendStatus(ctxOf(res), sessionParam(req), req.body)),
    )
    .post(
      '/sessions/:sessionId/status/schedule',
      idempotent((req, res) => scheduleStatus(ctxOf(res), sessionParam(req), req.body)),
    )
    .post(
      '/sessions/:sessionId/status/recurring',
      idempotent((req, res) => startRecurringStatus(ctxOf(res), sessionParam(req), req.body)),
    );
