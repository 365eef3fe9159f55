import {
  connectSession,
  countSessions,
  createSession,
  deleteSession,
  disconnectSession,
  getSessionRow,
  listSessionRows,
  ownSession,
  qrCodeOf,
  renameSession,
  requestPairingCode,
  SESSION_ORDER,
  sessionEventRow,
  sessionStatusSchema,
  setSessionStatus,
  settableStatusSchema,
  statusOf,
} from '../resolvers/sessions.ts';
import { builder } from './builder.ts';

export const SessionStatusEnum = builder.enumType('SessionStatus', { values: sessionStatusSchema.options });

const SettableStatus = builder.enumType('SettableSessionStatus', { values: settableStatusSchema.options });

/** Relations that reach further (messages, incoming, groups) are added beside their domain's types. */
builder.prismaObject('Session', {
  fields: (t) => ({
    id: t.exposeID('id'),
    sessionName: t.exposeString('sessionName'),
    status: t.field({ type: SessionStatusEnum, resolve: (row, _args, ctx) => statusOf(ctx, row) }),
    qrCode: t.string({
      nullable: true,
      description: 'The QR code to scan (data:image/png;base64,...) while the status is QR_READY.',
      resolve: (row, _args, ctx) => qrCodeOf(ctx, row),
    }),
    phone: t.exposeString('phone', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    lastSeen: t.expose('lastSeen', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

builder.prismaObjectField('Account', 'sessions', (t) =>
  t.relatedConnection('sessions', { cursor: 'id', totalCount: true, query: () => ({ orderBy: SESSION_ORDER }) }),
);

builder.queryFields((t) => ({
  sessions: t.prismaConnection({
    type: 'Session',
    cursor: 'id',
    description: "This account's sessions, oldest first.",
    resolve: (query, _root, _args, ctx) => listSessionRows(ctx, query),
    totalCount: (_root, _args, ctx) => countSessions(ctx),
  }),
  session: t.prismaField({
    type: 'Session',
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => getSessionRow(ctx, String(args.id), query),
  }),
}));

builder.mutationFields((t) => ({
  createSession: t.prismaField({
    type: 'Session',
    args: { name: t.arg.string({ required: true }) },
    resolve: async (query, _root, args, ctx) => getSessionRow(ctx, (await createSession(ctx, { name: args.name })).id, query),
  }),
  renameSession: t.prismaField({
    type: 'Session',
    args: { id: t.arg.id({ required: true }), sessionName: t.arg.string({ required: true }) },
    resolve: async (query, _root, args, ctx) =>
      getSessionRow(ctx, (await renameSession(ctx, String(args.id), { sessionName: args.sessionName })).id, query),
  }),
  deleteSession: t.field({
    type: 'Boolean',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await deleteSession(ctx, String(args.id))).ok,
  }),
  connectSession: t.prismaField({
    type: 'Session',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => getSessionRow(ctx, (await connectSession(ctx, String(args.id))).id, query),
  }),
  disconnectSession: t.prismaField({
    type: 'Session',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => getSessionRow(ctx, (await disconnectSession(ctx, String(args.id))).id, query),
  }),
  setSessionStatus: t.prismaField({
    type: 'Session',
    args: { id: t.arg.id({ required: true }), status: t.arg({ type: SettableStatus, required: true }) },
    resolve: async (query, _root, args, ctx) =>
      getSessionRow(ctx, (await setSessionStatus(ctx, String(args.id), { status: args.status })).id, query),
  }),
  requestPairingCode: t.field({
    type: 'String',
    args: { id: t.arg.id({ required: true }), phoneNumber: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => (await requestPairingCode(ctx, String(args.id), { phoneNumber: args.phoneNumber })).pairingCode,
  }),
}));

builder.subscriptionField('sessionUpdates', (t) =>
  t.prismaField({
    type: 'Session',
    description: 'Each status change and each new QR code of one session, as it happens.',
    args: { sessionId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      await ownSession(ctx, String(args.sessionId));
      return ctx.events.subscribe('session', String(args.sessionId));
    },
    resolve: (query, event, _args, ctx) => sessionEventRow(ctx, event, query),
  }),
);
