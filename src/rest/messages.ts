import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Router } from 'express';
import type { Request, Response } from 'express';
import { downloadIncomingMedia } from '../resolvers/incoming-media.ts';
import type { IncomingMediaDownload } from '../resolvers/incoming-media.ts';
import {
  editMessage,
  getMessage,
  listMessages,
  readIncoming,
  sendInteractive,
  sendMedia,
  sendRich,
  sendText,
  sendTextShortcut,
  sendTyping,
} from '../resolvers/messages.ts';
import { listReceipts } from '../resolvers/receipts.ts';
import { ctxOf } from './context.ts';
import { idempotent } from './idempotent.ts';

export const sessionParam = (req: Request): string => String(req.params.sessionId);

/**
 * The busiest routes (sends and the incoming long-poll), mounted before every other router so a send
 * does not walk past the whole API first; none of their paths is claimed by another router.
 */
export const sendRouter = (): Router =>
  Router()
    // Before /sessions/:sessionId/send, which would otherwise read "api" as a session id.
    .post(
      '/sessions/api/send',
      idempotent((req, res) => sendTextShortcut(ctxOf(res), req.body)),
    )
    .post(
      '/whatsapp/send',
      idempotent((req, res) => sendTextShortcut(ctxOf(res), req.body)),
    )
    .post(
      '/sessions/:sessionId/send',
      idempotent((req, res) => sendText(ctxOf(res), sessionParam(req), req.body)),
    )
    .post(
      '/sessions/:sessionId/send-media',
      idempotent((req, res) => sendMedia(ctxOf(res), sessionParam(req), req.body)),
    )
    .post(
      '/sessions/:sessionId/send-interactive',
      idempotent((req, res) => sendInteractive(ctxOf(res), sessionParam(req), req.body)),
    )
    .post(
      '/sessions/:sessionId/messages/rich',
      idempotent((req, res) => sendRich(ctxOf(res), sessionParam(req), req.body)),
    )
    .post(
      '/sessions/:sessionId/messages/typing',
      idempotent((req, res) => sendTyping(ctxOf(res), sessionParam(req), req.body)),
    )
    .get('/sessions/:sessionId/incoming', async (req, res) => {
      const gone = new AbortController();
      res.on('close', () => gone.abort());
      const page = await readIncoming(ctxOf(res), sessionParam(req), req.query, gone.signal);
      if (!res.writableEnded && !gone.signal.aborted) res.json(page);
    });

/** Streams a received file: headers from its record, then the bytes as the network thread decrypts them. */
const sendFile = async (res: Response, file: IncomingMediaDownload): Promise<void> => {
  if (file.fileName) res.attachment(file.fileName);
  else res.setHeader('Content-Disposition', 'inline');
  res.setHeader('Content-Type', file.mimetype);
  if (file.size > 0) res.setHeader('Content-Length', String(file.size));
  res.setHeader('Cache-Control', 'private, no-store');
  res.status(200);
  // The status goes out before the first byte is checked: a file that fails its check (even one that
  // arrives in a single chunk) is then a cut-off body, never a connection closed without an answer.
  res.flushHeaders();
  try {
    await pipeline(Readable.fromWeb(file.stream as WebReadableStream<Uint8Array>), res);
  } catch (err) {
    // Headers are gone by now: a cut-off body (shorter than Content-Length) is all the client can be told.
    if (!res.destroyed) res.destroy();
    const gone = (err as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE';
    if (!gone) ctxOf(res).logger.warn({ err, requestId: ctxOf(res).requestId }, 'streaming a received file failed midway');
  }
};

export const messagesRouter = (): Router =>
  Router()
    .get('/sessions/:sessionId/incoming/:messageId/media', async (req, res) => {
      await sendFile(res, await downloadIncomingMedia(ctxOf(res), sessionParam(req), String(req.params.messageId)));
    })
    .post(
      '/sessions/:sessionId/messages/:messageId/edit',
      idempotent((req, res) => editMessage(ctxOf(res), sessionParam(req), String(req.params.messageId), req.body)),
    )
    .get('/sessions/:sessionId/messages', async (req, res) => {
      res.json(await listMessages(ctxOf(res), sessionParam(req), req.query));
    })
    .get('/sessions/:sessionId/messages/:messageId', async (req, res) => {
      res.json(await getMessage(ctxOf(res), sessionParam(req), String(req.params.messageId)));
    })
    .get('/sessions/:sessionId/messages/:messageId/receipts', async (req, res) => {
      res.json(await listReceipts(ctxOf(res), sessionParam(req), String(req.params.messageId)));
    });
