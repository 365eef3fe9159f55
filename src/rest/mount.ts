import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Router } from 'express';
import type { Request, RequestHandler, Response } from 'express';
import type { IncomingMediaDownload } from '../resolvers/incoming-media.ts';
import { ctxOf } from './context.ts';
import { idempotent } from './idempotent.ts';
import { isAnswer, statusesOf } from './route.ts';
import type { Call, Route } from './route.ts';

/** The call a handler gets; its signal (and the listener behind it) only exists once a handler asks for it. */
const callOf = (req: Request, res: Response): { call: Call; gone: () => boolean } => {
  let closed: AbortController | undefined;
  const call: Call = {
    // Built inside idempotent()'s callback for a send, so this is the context that carries the key's gate.
    ctx: ctxOf(res),
    // Only wildcard segments give arrays, and no /v1 path has one.
    params: req.params as Record<string, string>,
    body: req.body,
    query: req.query,
    get signal() {
      if (!closed) {
        const controller = new AbortController();
        res.on('close', () => controller.abort());
        closed = controller;
      }
      return closed.signal;
    },
  };
  return { call, gone: () => closed?.signal.aborted ?? false };
};

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

const handlerOf = (route: Route): RequestHandler => {
  if ('file' in route) {
    return async (req, res) => {
      await sendFile(res, await route.handler(callOf(req, res).call));
    };
  }
  if (route.idempotent) return idempotent((req, res) => Promise.resolve(route.handler(callOf(req, res).call)));
  const [status] = statusesOf(route);
  return async (req, res) => {
    const { call, gone } = callOf(req, res);
    const result = await route.handler(call);
    // A long-poll whose client left (or a route that answered by itself) has no one to answer.
    if (res.writableEnded || gone()) return;
    if (isAnswer(result)) res.status(result.status).json(result.body);
    else res.status(status).json(result);
  };
};

/** One router for a group of routes, in their order: the first route whose path matches answers. */
export const mount = (routes: readonly Route[]): Router => {
  const router = Router();
  for (const route of routes) router[route.method](route.path, handlerOf(route));
  return router;
};
