import { z } from 'zod';
import {
  connectSession,
  createSession,
  deleteSession,
  disconnectSession,
  getSession,
  listSessions,
  nameSchema,
  pairingSchema,
  qrWaitSchema,
  renameSchema,
  renameSession,
  requestPairingCode,
  sessionIdFrom,
  sessionIdSchema,
  sessionQrCode,
  sessionStatus,
  sessionStatusSchema,
  setSessionStatus,
  statusSchema,
  statusWaitSchema,
} from '../resolvers/sessions.ts';
import { dateTime, ok } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Sessions';
const S = '/sessions/:sessionId';

const session = z
  .object({
    id: z.string(),
    sessionName: z.string(),
    status: sessionStatusSchema,
    qrCode: z.string().nullable().describe('PNG data URL of the current QR code, while QR_READY'),
    phone: z.string().nullable(),
    lastError: z.string().nullable(),
    lastSeen: dateTime.nullable(),
  })
  .meta({ id: 'Session' });
const qrCode = z
  .object({ sessionId: z.string(), status: sessionStatusSchema, qrCode: z.string().nullable(), hasQrCode: z.boolean() })
  .meta({ id: 'QrCode' });

export const sessionsRoutes: Route[] = [
  route({
    method: 'get',
    path: '/sessions',
    summary: 'List sessions',
    tag,
    response: z.array(session),
    handler: ({ ctx }) => listSessions(ctx),
  }),
  route({
    method: 'post',
    path: '/sessions',
    summary: 'Create a session',
    tag,
    body: nameSchema,
    response: session,
    status: 201,
    handler: ({ ctx, body }) => createSession(ctx, body),
  }),
  route({
    method: 'get',
    path: S,
    summary: 'Get a session',
    tag,
    response: session,
    handler: ({ ctx, params }) => getSession(ctx, params.sessionId),
  }),
  route({
    method: 'patch',
    path: S,
    summary: 'Rename a session',
    tag,
    body: renameSchema,
    response: session,
    handler: ({ ctx, params, body }) => renameSession(ctx, params.sessionId, body),
  }),
  route({
    method: 'delete',
    path: S,
    summary: 'Log out (when linked) and delete a session',
    tag,
    response: ok,
    handler: ({ ctx, params }) => deleteSession(ctx, params.sessionId),
  }),
  route({
    method: 'get',
    path: `${S}/status`,
    summary: 'Live status; extension: waitFor + waitMs wait until the session has that status',
    tag,
    query: statusWaitSchema,
    response: session,
    handler: ({ ctx, params, query, signal }) => sessionStatus(ctx, params.sessionId, query, signal),
  }),
  route({
    method: 'patch',
    path: `${S}/status`,
    summary: 'Manual status override',
    tag,
    body: statusSchema,
    response: session,
    handler: ({ ctx, params, body }) => setSessionStatus(ctx, params.sessionId, body),
  }),
  route({
    method: 'get',
    path: `${S}/qrcode`,
    summary: 'The current QR code; extension: waitMs waits until one is shown',
    tag,
    query: qrWaitSchema,
    response: qrCode,
    handler: ({ ctx, params, query, signal }) => sessionQrCode(ctx, params.sessionId, query, signal),
  }),
  route({
    method: 'post',
    path: `${S}/connect`,
    summary: 'Open the link (QR or stored credentials)',
    tag,
    response: session,
    handler: ({ ctx, params }) => connectSession(ctx, params.sessionId),
  }),
  route({
    method: 'post',
    path: `${S}/disconnect`,
    summary: 'Close the link, keep credentials',
    tag,
    response: session,
    handler: ({ ctx, params }) => disconnectSession(ctx, params.sessionId),
  }),
  route({
    method: 'post',
    path: `${S}/pairing-code`,
    summary: 'Link with an 8-character code instead of a QR',
    tag,
    body: pairingSchema,
    response: z.object({ pairingCode: z.string() }),
    handler: ({ ctx, params, body }) => requestPairingCode(ctx, params.sessionId, body),
  }),
  // Shortcut routes: the session id travels in the query or the body.
  route({
    method: 'get',
    path: '/whatsapp/status',
    summary: 'Shortcut: session status by query sessionId',
    tag,
    query: statusWaitSchema.extend(sessionIdSchema.shape),
    response: session,
    handler: ({ ctx, query, signal }) => sessionStatus(ctx, sessionIdFrom(query), query, signal),
  }),
  route({
    method: 'post',
    path: '/whatsapp/connect',
    summary: 'Shortcut: connect by body sessionId',
    tag,
    body: sessionIdSchema,
    response: session,
    handler: ({ ctx, body }) => connectSession(ctx, sessionIdFrom(body)),
  }),
  route({
    method: 'post',
    path: '/whatsapp/disconnect',
    summary: 'Shortcut: disconnect by body sessionId',
    tag,
    body: sessionIdSchema,
    response: session,
    handler: ({ ctx, body }) => disconnectSession(ctx, sessionIdFrom(body)),
  }),
];
