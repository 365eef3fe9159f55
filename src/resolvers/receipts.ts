import type { OutgoingMessage, Prisma } from '../generated/sqlite/client.ts';
import type { Receipt, ReceiptKind } from '../runtime/ports/network.ts';
import type { ReceiptTimesRow } from '../runtime/ports/outgoing.ts';
import type { OutboxEvent, OutboxRows } from '../runtime/ports/webhooks.ts';
import type { Deps, RequestContext } from './context.ts';
import { announceReceipts } from './conversations.ts';
import { notFound } from './errors.ts';
import { messageView } from './messages.ts';
import type { MessageRecordView } from './messages.ts';
import { ownSessionId } from './sessions.ts';

/** The times a recipient acknowledged a message; each is set once and never moves. */
export interface ReceiptTimes {
  deliveredAt: Date | null;
  readAt: Date | null;
  playedAt: Date | null;
}

type TimeField = keyof ReceiptTimes;

/** A receipt from a session's link, as the network thread passed it on. */
export interface SessionReceipt {
  sessionId: string;
  receipt: Receipt;
}

/**
 * What a receipt implies: played means read, read means delivered. Fields already set keep their time,
 * so a repeated or late receipt changes nothing and nothing goes backwards. Answers the fields it set.
 */
const advance = (times: ReceiptTimes, kind: ReceiptKind, at: Date): TimeField[] => {
  const implied: TimeField[] =
    kind === 'played' ? ['playedAt', 'readAt', 'deliveredAt'] : kind === 'read' ? ['readAt', 'deliveredAt'] : ['deliveredAt'];
  const set = implied.filter((field) => times[field] === null);
  for (const field of set) times[field] = at;
  return set;
};

const isShared = (jid: string): boolean => jid.endsWith('@g.us') || jid === 'status@broadcast';

type Target = Pick<OutgoingMessage, 'id' | 'accountId' | 'sessionId' | 'waMessageId' | 'toNumber' | 'toLid' | 'remoteJid'> & ReceiptTimes;

/** One group member's receipt row as this batch leaves it. */
interface Member {
  row: ReceiptTimes;
  isNew: boolean;
  set: Set<TimeField>;
  recipient: string;
  recipientLid: string | null;
  /** the row as read, for an existing one */
  stored?: { recipient: string; recipientLid: string | null };
}

/** message.delivered and message.read (played counts as read): what a receiver of events needs to match them. */
/** Who acknowledged: the phone-number JID when known (else the LID), and the LID beside it. */
interface Acknowledger {
  recipient: string;
  recipientLid: string | null;
}

const receiptEvent = (
  target: Target,
  { recipient, recipientLid }: Acknowledger,
  type: 'message.delivered' | 'message.read',
  at: Date,
  played: boolean,
): OutboxEvent => ({
  accountId: target.accountId,
  sessionId: target.sessionId,
  type,
  data: {
    messageId: target.id,
    sessionId: target.sessionId,
    waMessageId: target.waMessageId,
    to: target.toNumber,
    recipient,
    recipientLid,
    at: at.toISOString(),
    ...(type === 'message.read' ? { played } : {}),
  },
});

const eventsFor = (target: Target, recipient: Acknowledger, set: TimeField[], times: ReceiptTimes): OutboxEvent[] => [
  ...(set.includes('deliveredAt') && times.deliveredAt
    ? [receiptEvent(target, recipient, 'message.delivered', times.deliveredAt, false)]
    : []),
  ...(set.includes('readAt') && times.readAt
    ? [receiptEvent(target, recipient, 'message.read', times.readAt, set.includes('playedAt'))]
    : []),
];

/** Sets exactly the fields this batch set, and only where they are still empty. */
const onlyEmpty = (fields: Set<TimeField>, times: ReceiptTimes) => ({
  where: Object.fromEntries([...fields].map((f) => [f, null])) as Partial<Record<TimeField, null>>,
  data: Object.fromEntries([...fields].map((f) => [f, times[f]])) as Partial<ReceiptTimes>,
});

/**
 * Records a batch of receipts: the message's own times (in a group, the first member's), one row per
 * group member, and the webhook events of what changed, all in one transaction. Receipts for messages
 * this service did not send (other devices of the account, group admin stanzas) are ignored.
 * Batches run one at a time (see the group commit in deps.ts), and a session's link lives on one node,
 * so reading first and writing what changed is race-free; the conditional writes keep it idempotent anyway.
 */
export const recordReceipts = async (
  deps: Pick<Deps, 'db' | 'webhooks' | 'outgoing'> & Partial<Pick<Deps, 'events'>>,
  batch: SessionReceipt[],
): Promise<void> => {
  const idsBySession = new Map<string, Set<string>>();
  for (const { sessionId, receipt } of batch) {
    const ids = idsBySession.get(sessionId) ?? new Set<string>();
    ids.add(receipt.waMessageId);
    idsBySession.set(sessionId, ids);
  }
  const rows = await deps.db.outgoingMessage.findMany({
    where: { OR: [...idsBySession].map(([sessionId, ids]) => ({ sessionId, waMessageId: { in: [...ids] } })) },
    select: {
      id: true,
      accountId: true,
      sessionId: true,
      waMessageId: true,
      toNumber: true,
      toLid: true,
      remoteJid: true,
      deliveredAt: true,
      readAt: true,
      playedAt: true,
    },
  });
  if (rows.length === 0) return;
  const targets = new Map<string, Target>(rows.map((r) => [`${r.sessionId}\u0000${r.waMessageId}`, r]));
  const shared = batch.filter(
    ({ sessionId, receipt }) => isShared(receipt.chatJid) && targets.has(`${sessionId}\u0000${receipt.waMessageId}`),
  );
  const existing = shared.length
    ? await deps.db.messageReceipt.findMany({
        where: {
          messageId: {
            in: [...new Set(shared.map(({ sessionId, receipt }) => targets.get(`${sessionId}\u0000${receipt.waMessageId}`)?.id ?? ''))],
          },
        },
      })
    : [];
  // A member is one row whether its receipts name it by number or by LID (its LID when known is the key).
  const memberKey = (messageId: string, who: { recipient: string; recipientLid?: string | null }) =>
    `${messageId}\u0000${who.recipientLid ?? who.recipient}`;
  const members = new Map<string, Member>();
  for (const r of existing) {
    const member: Member = {
      row: r,
      isNew: false,
      set: new Set<TimeField>(),
      recipient: r.recipient,
      recipientLid: r.recipientLid,
      stored: r,
    };
    members.set(memberKey(r.messageId, r), member);
    if (r.recipientLid) members.set(`${r.messageId}\u0000${r.recipient}`, member);
  }

  const changedTargets = new Map<string, Set<TimeField>>();
  const events: OutboxEvent[] = [];
  for (const { sessionId, receipt } of batch) {
    const target = targets.get(`${sessionId}\u0000${receipt.waMessageId}`);
    if (!target) continue;
    const at = new Date(receipt.at);
    const who: Acknowledger = { recipient: receipt.recipient, recipientLid: receipt.recipientLid ?? null };
    if (isShared(receipt.chatJid)) {
      const key = memberKey(target.id, who);
      const member: Member = members.get(key) ??
        members.get(`${target.id}\u0000${who.recipient}`) ?? {
          row: { deliveredAt: null, readAt: null, playedAt: null },
          isNew: true,
          set: new Set<TimeField>(),
          recipient: who.recipient,
          recipientLid: who.recipientLid,
        };
      // A member first known by its LID alone keeps its row once its number is known.
      if (who.recipientLid && !member.recipientLid) member.recipientLid = who.recipientLid;
      if (member.recipientLid && member.recipient === member.recipientLid && who.recipient !== who.recipientLid)
        member.recipient = who.recipient;
      members.set(key, member);
      const set = advance(member.row, receipt.kind, at);
      for (const field of set) member.set.add(field);
      events.push(...eventsFor(target, { recipient: member.recipient, recipientLid: member.recipientLid }, set, member.row));
    }
    const set = advance(target, receipt.kind, at);
    if (set.length === 0) continue;
    const fields = changedTargets.get(target.id) ?? new Set<TimeField>();
    for (const field of set) fields.add(field);
    changedTargets.set(target.id, fields);
    if (!isShared(receipt.chatJid))
      events.push(...eventsFor(target, { ...who, recipientLid: who.recipientLid ?? target.toLid }, set, target));
  }

  const writes: Array<Prisma.PrismaPromise<unknown>> = [];
  const times: ReceiptTimesRow[] = [];
  for (const target of targets.values()) {
    const fields = changedTargets.get(target.id);
    if (!fields) continue;
    const pick = (field: TimeField) => (fields.has(field) ? target[field] : null);
    times.push({ id: target.id, deliveredAt: pick('deliveredAt'), readAt: pick('readAt'), playedAt: pick('playedAt') });
  }
  const created: Prisma.MessageReceiptCreateManyInput[] = [];
  const seen = new Set<Member>();
  const touched = new Set<string>(changedTargets.keys());
  for (const [key, member] of members) {
    const renamed = member.stored && (member.stored.recipient !== member.recipient || member.stored.recipientLid !== member.recipientLid);
    if ((member.set.size === 0 && !renamed) || seen.has(member)) continue;
    seen.add(member);
    const [messageId = ''] = key.split('\u0000');
    touched.add(messageId);
    const { recipient, recipientLid } = member;
    if (member.isNew) {
      created.push({ messageId, recipient, recipientLid, ...member.row });
      continue;
    }
    const { where, data } = onlyEmpty(member.set, member.row);
    const stored = member.stored?.recipient ?? recipient;
    if (renamed) {
      writes.push(deps.db.messageReceipt.updateMany({ where: { messageId, recipient: stored }, data: { recipient, recipientLid } }));
    }
    if (member.set.size > 0) writes.push(deps.db.messageReceipt.updateMany({ where: { messageId, recipient, ...where }, data }));
  }
  if (created.length > 0) writes.push(deps.db.messageReceipt.createMany({ data: created }));
  if (writes.length === 0 && times.length === 0) return;
  const outbox = (await Promise.all(events.map((e) => deps.webhooks.rowsFor(e)))).filter((r): r is OutboxRows => r !== null);
  // 1:1 receipts (no group member rows) write their times and events as raw statements, cheaper than a
  // Prisma transaction; one statement alone needs no transaction at all.
  if (writes.length === 0) await deps.outgoing.receiptTimesWithEvents(times, outbox);
  else
    await deps.db.$transaction([
      ...(times.length > 0 ? [deps.outgoing.receiptTimes(times)] : []),
      ...writes,
      ...deps.webhooks.writes(outbox),
    ]);
  if (outbox.length > 0) deps.webhooks.written(outbox);
  if (deps.events) {
    // The stored messages whose receipts changed, for the storedMessageUpdates subscription.
    const refs = [...targets.values()].flatMap((t) =>
      touched.has(t.id) && t.waMessageId ? [{ sessionId: t.sessionId, chatId: t.toNumber, waMessageId: t.waMessageId }] : [],
    );
    announceReceipts({ events: deps.events }, refs);
  }
};

export interface ReceiptView {
  recipient: string;
  /** extension: the recipient's LID, when the network told it */
  recipientLid: string | null;
  deliveredAt: string | null;
  readAt: string | null;
  playedAt: string | null;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** One acknowledger's view: a group member's row, or a 1:1 record with its recipient. */
const receiptView = (recipient: string, recipientLid: string | null, times: ReceiptTimes): ReceiptView => ({
  recipient,
  recipientLid,
  deliveredAt: iso(times.deliveredAt),
  readAt: iso(times.readAt),
  playedAt: iso(times.playedAt),
});

/**
 * Who acknowledged a message: one entry per group member that sent a receipt, oldest delivery first;
 * for a 1:1 message, its recipient with the message's own times (once any receipt came).
 */
export const receiptsOfRecord = async (
  ctx: Pick<Deps, 'db'>,
  record: Pick<MessageRecordView, 'id' | 'toNumber' | 'toLid' | 'remoteJid' | 'deliveredAt' | 'readAt' | 'playedAt'>,
): Promise<ReceiptView[]> => {
  if (!isShared(record.remoteJid ?? record.toNumber)) {
    if (!record.deliveredAt) return [];
    const { deliveredAt, readAt, playedAt } = record;
    return [{ recipient: record.remoteJid ?? record.toNumber, recipientLid: record.toLid, deliveredAt, readAt, playedAt }];
  }
  const rows = await ctx.db.messageReceipt.findMany({
    where: { messageId: record.id },
    orderBy: [{ deliveredAt: 'asc' }, { recipient: 'asc' }],
  });
  return rows.map((r) => receiptView(r.recipient, r.recipientLid, r));
};

/** A group message's receipt rows, first delivered first. */
export const RECEIPT_ORDER = [{ deliveredAt: 'asc' }, { recipient: 'asc' }] satisfies Prisma.MessageReceiptOrderByWithRelationInput[];

/** As receiptsOfRecord, for a record read with its receipt rows (GraphQL loads them with the record). */
export const receiptsFromRows = (
  record: Pick<OutgoingMessage, 'toNumber' | 'toLid' | 'remoteJid'> & ReceiptTimes,
  rows: Array<{ recipient: string; recipientLid: string | null } & ReceiptTimes>,
): ReceiptView[] => {
  if (!isShared(record.remoteJid ?? record.toNumber)) {
    return record.deliveredAt ? [receiptView(record.remoteJid ?? record.toNumber, record.toLid, record)] : [];
  }
  return rows.map((r) => receiptView(r.recipient, r.recipientLid, r));
};

/** GET /sessions/{id}/messages/{messageId}/receipts: 404 for an unknown session or message. */
export const listReceipts = async (
  ctx: RequestContext,
  sessionId: string,
  messageId: string,
): Promise<{ messageId: string; count: number; items: ReceiptView[] }> => {
  await ownSessionId(ctx, sessionId);
  await ctx.outgoing.settled();
  const record = await ctx.db.outgoingMessage.findFirst({ where: { id: messageId, sessionId, accountId: ctx.caller.accountId } });
  if (!record) throw notFound('Message');
  const items = await receiptsOfRecord(ctx, messageView(record));
  return { messageId, count: items.length, items };
};
