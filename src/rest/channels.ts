import { Router } from 'express';
import { listChannels, sendToChannel } from '../resolvers/channels.ts';
import { ctxOf } from './context.ts';
import { idempotent } from './idempotent.ts';
import { sessionParam } from './messages.ts';

export const channelsRouter = (): Router =>
  Router()
    .get('/sessions/:sessionId/channels', async (req, res) => {
      res.json(await listChannels(ctxOf(res), sessionParam(req)));
    })
    .post(
      '/sessions/:sessionId/channels/:channelJid/send',
      idempotent((req, res) => sendToChannel(ctxOf(res), sessionParam(req), String(req.params.channelJid), req.body)),
    );
