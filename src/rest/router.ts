import express, { Router } from 'express';
import type { Deps } from '../resolvers/context.ts';
import { accountsRouter } from './accounts.ts';
import { contactGroupsRouter } from './contact-groups.ts';
import { contactsRouter } from './contacts.ts';
import { withContext } from './context.ts';
import { bulkRouter } from './bulk.ts';
import { channelsRouter } from './channels.ts';
import { groupsRouter } from './groups.ts';
import { statusesRouter } from './statuses.ts';
import { messagesRouter, sendRouter } from './messages.ts';
import { schedulingRouter } from './scheduling.ts';
import { sessionsRouter } from './sessions.ts';
import { webhooksRouter } from './webhooks.ts';
import { errorHandler, notFoundRoute, optionsWithoutBody, refuseDeepBody, refuseNul, requireJsonBody } from './errors.ts';

/** Everything under /v1: the key, then body checks, then the domain routers. */
export const restRouter = (deps: Deps): Router =>
  Router()
    .use(withContext(deps))
    .use(refuseNul)
    .use(optionsWithoutBody)
    .use(requireJsonBody)
    // Not strict: null, 42 or "x" are JSON, so they reach validation (VALIDATION_FAILED), not INVALID_JSON.
    .use(express.json({ limit: deps.settings.BODY_LIMIT, type: 'application/json', strict: false }))
    .use(refuseDeepBody)
    .use(sendRouter())
    .use(accountsRouter())
    .use(contactGroupsRouter())
    .use(contactsRouter())
    .use(schedulingRouter())
    .use(bulkRouter())
    .use(groupsRouter())
    .use(statusesRouter())
    .use(channelsRouter())
    .use(messagesRouter())
    .use(sessionsRouter())
    .use(webhooksRouter())
    .use(notFoundRoute)
    .use(errorHandler(deps.logger));
