import { Router } from 'express';
import { cancelRecurring, listRecurring, scheduleMessage, sendVariation, startCampaign, startRecurring } from '../resolvers/scheduling.ts';
import { ctxOf } from './context.ts';
import { idempotent } from './idempotent.ts';
import { sessionParam } from './messages.ts';

/** Mounted before the messages router, so `messages/recurring` is not read as a message id. */
export const schedulingRouter = (): Router =>
  Router()
    .post(
      '/sessions/:sessionId/messages/campaign',
      idempotent((req, res) => startCampaign(ctxOf(res), sessionParam(req), req.body)),
    )
    .post(
      '/sessions/:sessionId/messages/bulk-send',
      idempotent((req, res) => startCampaign(ctxOf(res), sessionParam(req), req.body)),
    )
    .post(
      '/sessions/:sessionId/messages/variations',
      idempotent((req, res) => sendVariation(ctxOf(res), sessionParam(req), req.body)),
    )
    .post(
      '/sessions/:sessionId/messages/schedule',
      idempotent((req, res) => scheduleMessage(ctxOf(res), sessionParam(req), req.body)),
    )
    .post(
      '/sessions/:sessionId/messages/recurring',
      idempotent((req, res) => startRecurring(ctxOf(res), sessionParam(req), req.body)),
    )
    .get('/sessions/:sessionId/messages/recurring', async (req, res) => {
      res.json(await listRecurring(ctxOf(res), sessionParam(req)));
    })
    .delete('/sessions/:sessionId/messages/recurring/:timerId', async (req, res) => {
      res.json(await cancelRecurring(ctxOf(res), sessionParam(req), String(req.params.timerId)));
    });
