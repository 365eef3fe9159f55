import { isJidGroup, isJidStatusBroadcast, jidNormalizedUser, proto } from 'baileys';
import type { MessageUserReceiptUpdate, WAMessage, WAMessageUpdate } from 'baileys';
import type { Receipt, ReceiptKind } from '../ports/network.ts';

const { DELIVERY_ACK, READ, PLAYED } = proto.WebMessageInfo.Status;

const kindOf = (status: number | null | undefined): ReceiptKind | undefined =>
  status === DELIVERY_ACK ? 'delivered' : status === READ ? 'read' : status === PLAYED ? 'played' : undefined;

const isShared = (jid: string): boolean => Boolean(isJidGroup(jid) || isJidStatusBroadcast(jid));

/** Seconds (a receipt's `t`, as Baileys passes it on) to milliseconds; now when it is missing. */
const msOf = (seconds: number | { toNumber: () => number } | null | undefined): number => {
  const n = typeof seconds === 'number' ? seconds : (seconds?.toNumber() ?? 0);
  return n > 0 ? n * 1000 : Date.now();
};

/** A 1:1 receipt: Baileys reports it as the status of our own message (`messages.update`). */
export const receiptsFromUpdates = (updates: WAMessageUpdate[]): Receipt[] =>
  updates.flatMap(({ key, update }) => {
    const kind = kindOf(update.status);
    if (!kind || !key.fromMe || !key.id || !key.remoteJid || isShared(key.remoteJid)) return [];
    return [
      { waMessageId: key.id, chatJid: key.remoteJid, recipient: jidNormalizedUser(key.remoteJid), kind, at: msOf(update.messageTimestamp) },
    ];
  });

/** One group member's receipt (`message-receipt.update`): its user JID and the times it reported. */
const fromUserReceipt = (waMessageId: string, chatJid: string, receipt: proto.IUserReceipt): Receipt[] => {
  if (!receipt.userJid) return [];
  const recipient = jidNormalizedUser(receipt.userJid);
  const of = (kind: ReceiptKind, t: number | { toNumber: () => number } | null | undefined): Receipt[] =>
    t ? [{ waMessageId, chatJid, recipient, kind, at: msOf(t) }] : [];
  return [...of('delivered', receipt.receiptTimestamp), ...of('read', receipt.readTimestamp), ...of('played', receipt.playedTimestamp)];
};

export const receiptsFromUserReceipts = (updates: MessageUserReceiptUpdate[]): Receipt[] =>
  updates.flatMap(({ key, receipt }) =>
    key.fromMe && key.id && key.remoteJid && isShared(key.remoteJid) ? fromUserReceipt(key.id, key.remoteJid, receipt) : [],
  );

/**
 * A receipt that arrives while Baileys still buffers the upsert of the message it acknowledges is
 * merged into that upsert (its `status`, or its `userReceipt` in a group) instead of being emitted.
 */
export const receiptsFromUpserts = (messages: WAMessage[]): Receipt[] =>
  messages.flatMap((m) => {
    const { key } = m;
    if (!key.fromMe || !key.id || !key.remoteJid) return [];
    if (isShared(key.remoteJid)) return (m.userReceipt ?? []).flatMap((r) => fromUserReceipt(key.id ?? '', key.remoteJid ?? '', r));
    return receiptsFromUpdates([{ key, update: { status: m.status, messageTimestamp: m.messageTimestamp } }]);
  });
