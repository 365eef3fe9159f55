import type { QrCodeView, SessionView } from '../resolvers/sessions.ts';
import {
  connectSession,
  createSession,
  deleteSession,
  disconnectSession,
  getSession,
  listSessions,
  ownSession,
  renameSession,
  requestPairingCode,
  sessionEventView,
  setSessionStatus,
} from '../resolvers/sessions.ts';
import { builder } from './builder.ts';

const SessionStatusEnum = builder.enumType('SessionStatus', {
  values: ['DISCONNECTED', 'CONNECTING', 'QR_READY', 'CONNECTED', 'PAUSED'] as const,
});

const SettableStatus = builder.enumType('SettableSessionStatus', {
  values: ['CONNECTED', 'DISCONNECTED', 'CONNECTING', 'PAUSED'] as const,
});

export const SessionRef = builder.objectRef<SessionView>('Session').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    sessionName: t.exposeString('sessionName'),
    status: t.field({ type: SessionStatusEnum, resolve: (s) => s.status }),
    qrCode: t.exposeString('qrCode', { nullable: true }),
    phone: t.exposeString('phone', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    lastSeen: t.exposeString('lastSeen', { nullable: true }),
  }),
});

builder.objectRef<QrCodeView>('SessionQrCode').implement({
  fields: (t) => ({
    sessionId: t.exposeID('sessionId'),
    status: t.field({ type: SessionStatusEnum, resolve: (s) => s.status }),
    qrCode: t.exposeString('qrCode', { nullable: true }),
    hasQrCode: t.exposeBoolean('hasQrCode'),
  }),
});

builder.queryFields((t) => ({
  sessions: t.field({ type: [SessionRef], resolve: (_root, _args, ctx) => listSessions(ctx) }),
  session: t.field({
    type: SessionRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getSession(ctx, String(args.id)),
  }),
}));

builder.mutationFields((t) => ({
  createSession: t.field({
    type: SessionRef,
    args: { name: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => createSession(ctx, { name: args.name }),
  }),
  renameSession: t.field({
    type: SessionRef,
    args: { id: t.arg.id({ required: true }), sessionName: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => renameSession(ctx, String(args.id), { sessionName: args.sessionName }),
  }),
  deleteSession: t.field({
    type: 'Boolean',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await deleteSession(ctx, String(args.id))).ok,
  }),
  connectSession: t.field({
    type: SessionRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => connectSession(ctx, String(args.id)),
  }),
  disconnectSession: t.field({
    type: SessionRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => disconnectSession(ctx, String(args.id)),
  }),
  setSessionStatus: t.field({
    type: SessionRef,
    args: { id: t.arg.id({ required: true }), status: t.arg({ type: SettableStatus, required: true }) },
    resolve: (_root, args, ctx) => setSessionStatus(ctx, String(args.id), { status: args.status }),
  }),
  requestPairingCode: t.field({
    type: 'String',
    args: { id: t.arg.id({ required: true }), phoneNumber: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => (await requestPairingCode(ctx, String(args.id), { phoneNumber: args.phoneNumber })).pairingCode,
  }),
}));

builder.subscriptionField('sessionUpdates', (t) =>
  t.field({
    type: SessionRef,
    description: 'Each status change and each new QR code of one session, as it happens.',
    args: { sessionId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      await ownSession(ctx, String(args.sessionId));
      return ctx.events.subscribe('session', String(args.sessionId));
    },
    resolve: (event) => sessionEventView(event),
  }),
);
