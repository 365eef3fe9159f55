import { Router } from 'express';
import type { Response } from 'express';
import {
  connectSession,
  createSession,
  deleteSession,
  disconnectSession,
  getSession,
  listSessions,
  renameSession,
  requestPairingCode,
  sessionIdFrom,
  sessionQrCode,
  sessionStatus,
  setSessionStatus,
} from '../resolvers/sessions.ts';
import { ctxOf } from './context.ts';

/** Aborted when the client goes away, so a waiting request stops waiting. */
const closedBy = (res: Response): AbortSignal => {
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  return gone.signal;
};

export const sessionsRouter = (): Router =>
  Router()
    .get('/sessions', async (_req, res) => {
      res.json(await listSessions(ctxOf(res)));
    })
    .post('/sessions', async (req, res) => {
      res.status(201).json(await createSession(ctxOf(res), req.body));
    })
    .get('/sessions/:sessionId', async (req, res) => {
      res.json(await getSession(ctxOf(res), req.params.sessionId));
    })
    .patch('/sessions/:sessionId', async (req, res) => {
      res.json(await renameSession(ctxOf(res), req.params.sessionId, req.body));
    })
    .delete('/sessions/:sessionId', async (req, res) => {
      res.json(await deleteSession(ctxOf(res), req.params.sessionId));
    })
    .get('/sessions/:sessionId/status', async (req, res) => {
      const view = await sessionStatus(ctxOf(res), req.params.sessionId, req.query, closedBy(res));
      if (!res.writableEnded) res.json(view);
    })
    .patch('/sessions/:sessionId/status', async (req, res) => {
      res.json(await setSessionStatus(ctxOf(res), req.params.sessionId, req.body));
    })
    .get('/sessions/:sessionId/qrcode', async (req, res) => {
      const view = await sessionQrCode(ctxOf(res), req.params.sessionId, req.query, closedBy(res));
      if (!res.writableEnded) res.json(view);
    })
    .post('/sessions/:sessionId/connect', async (req, res) => {
      res.json(await connectSession(ctxOf(res), req.params.sessionId));
    })
    .post('/sessions/:sessionId/disconnect', async (req, res) => {
      res.json(await disconnectSession(ctxOf(res), req.params.sessionId));
    })
    .post('/sessions/:sessionId/pairing-code', async (req, res) => {
      res.json(await requestPairingCode(ctxOf(res), req.params.sessionId, req.body));
    })
    // Shortcut routes: the session id travels in the query or the body.
    .get('/whatsapp/status', async (req, res) => {
      const view = await sessionStatus(ctxOf(res), sessionIdFrom(req.query), req.query, closedBy(res));
      if (!res.writableEnded) res.json(view);
    })
    .post('/whatsapp/connect', async (req, res) => {
      res.json(await connectSession(ctxOf(res), sessionIdFrom(req.body)));
    })
    .post('/whatsapp/disconnect', async (req, res) => {
      res.json(await disconnectSession(ctxOf(res), sessionIdFrom(req.body)));
    });
