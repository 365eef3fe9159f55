import { Router } from 'express';
import { bulkToContactGroup, bulkToTag } from '../resolvers/bulk.ts';
import { ctxOf } from './context.ts';
import { idempotent } from './idempotent.ts';
import { sessionParam } from './messages.ts';

export const bulkRouter = (): Router =>
  Router()
    .post(
      '/sessions/:sessionId/bulk/contact-group/:groupId',
      idempotent((req, res) => bulkToContactGroup(ctxOf(res), sessionParam(req), String(req.params.groupId), req.body)),
    )
    .post(
      '/sessions/:sessionId/bulk/tag/:tag',
      idempotent((req, res) => bulkToTag(ctxOf(res), sessionParam(req), String(req.params.tag), req.body)),
    );
