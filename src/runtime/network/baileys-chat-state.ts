import { ALL_WA_PATCH_NAMES, areJidsSameUser, isJidGroup, proto } from 'baileys';
import type { AuthenticationCreds, BaileysEventEmitter, Chat, MessageUserReceiptUpdate, WAMessageUpdate, WASocket } from 'baileys';
import type { Logger } from 'pino';
import type { ChatEvent, HistoryChatState } from '../ports/network.ts';
import type { LidBook } from './baileys-lids.ts';
import { completePerson, personOf, shownAddress } from './baileys-lids.ts';

type ChatState = Extract<ChatEvent, { kind: 'chat-state' }>;
type Change = Omit<ChatState, 'kind' | 'chatJid' | 'chatLid'>;

/**
 * What a `chats.update` or `chats.upsert` tells of the account's own state of a chat (rc14's
 * processSyncAction in Utils/chat-utils.js): `archived`; `pinned`, the pin's time or null; `muteEndTime`,
 * the end of a mute (ms; null unmuted, 0 or less for ever); `unreadCount` 0 for a read mark, -1 for
 * "marked unread" (a positive count is rc14's own count of received messages, which the store keeps itself).
 */
export const changeOfChat = (chat: Partial<Chat>, now = Date.now()): Change | undefined => {
  const change: Change = {};
  if (typeof chat.archived === 'boolean') change.archived = chat.archived;
  if (chat.pinned !== undefined) change.pinned = chat.pinned !== null && Number(chat.pinned) !== 0;
  if (chat.muteEndTime !== undefined) {
    const end = chat.muteEndTime === null ? null : Number(chat.muteEndTime);
    change.muted = end !== null && (end <= 0 || end > now);
  }
  if (chat.unreadCount === 0) change.read = true;
  if (chat.unreadCount === -1) change.markedUnread = true;
  return Object.keys(change).length > 0 ? change : undefined;
};

/**
 * The chats the account read on another device (a `read-self` receipt): rc14 reports it in a 1:1 chat
 * as `messages.update` with status READ on a message it received (`fromMe` false: a receipt for our own
 * message is `fromMe`), and in a group as `message-receipt.update` naming the account itself.
 */
export const chatsReadElsewhere = (
  updates: WAMessageUpdate[],
  receipts: MessageUserReceiptUpdate[],
  own: { jid?: string; lid?: string },
): string[] => {
  const chats = new Set<string>();
  for (const { key, update } of updates) {
    if (!key.fromMe && key.remoteJid && update.status === proto.WebMessageInfo.Status.READ) chats.add(key.remoteJid);
  }
  for (const { key, receipt } of receipts) {
    if (key.remoteJid && isOwn(receipt.userJid, own) && receipt.readTimestamp) chats.add(key.remoteJid);
  }
  return [...chats];
};

export const isOwn = (jid: string | null | undefined, own: { jid?: string; lid?: string }): boolean =>
  Boolean(jid && ((own.jid && areJidsSameUser(jid, own.jid)) || (own.lid && areJidsSameUser(jid, own.lid))));

/**
 * Passes on, as `chat-state` chat events, what the account's other devices do to its chats, one at a
 * time so that changes to one chat reach the service in the order they came.
 */
export const watchChatStates = ({
  ev,
  lids,
  own,
  onEvent,
  log,
}: {
  ev: BaileysEventEmitter;
  lids: LidBook;
  own: () => { jid?: string; lid?: string };
  onEvent: (event: ChatEvent) => void;
  log: Logger;
}): void => {
  // One at a time, so changes to one chat reach the service in the order they came.
  let inOrder = Promise.resolve();
  const pass = (jid: string, change: Change) => {
    inOrder = inOrder
      .then(async () => onEvent({ kind: 'chat-state', ...(await addressed(jid, lids)), ...change }))
      .catch((err: unknown) => log.error({ err, chat: jid }, 'passing on a chat state change failed'));
  };
  const fromChats = (chats: Array<Partial<Chat>>) => {
    for (const chat of chats) {
      const change = chat.id ? changeOfChat(chat) : undefined;
      if (change && chat.id) pass(chat.id, change);
    }
  };
  ev.on('chats.update', fromChats);
  ev.on('chats.upsert', fromChats);
  ev.on('messages.update', (updates) => {
    for (const jid of chatsReadElsewhere(updates, [], own())) pass(jid, { read: true });
  });
  ev.on('message-receipt.update', (receipts) => {
    for (const jid of chatsReadElsewhere([], receipts, own())) pass(jid, { read: true });
  });
};

/** A chat's addresses as chat events name it: a person's phone-number JID where known (else the LID JID) and LID. */
const addressed = async (jid: string, lids: LidBook): Promise<{ chatJid: string; chatLid: string | null }> => {
  if (isJidGroup(jid)) return { chatJid: jid, chatLid: null };
  const person = await completePerson(personOf(jid), lids);
  return { chatJid: shownAddress(person) ?? jid, chatLid: person.lid ?? null };
};

/**
 * The archive, pin and mute of a history chunk's chats (the history event's `states`): rc14 merges the
 * first app state sync's changes into them (Utils/event-buffer.js); a chunk's unread counts are the
 * phone's, not read marks, and are left out.
 */
export const historyChatStates = async (chats: Array<Partial<Chat>>, lids: LidBook): Promise<HistoryChatState[]> => {
  const states: HistoryChatState[] = [];
  for (const chat of chats) {
    const { read: _read, markedUnread: _unread, ...change } = (chat.id ? changeOfChat(chat) : undefined) ?? {};
    if (chat.id && Object.keys(change).length > 0) states.push({ ...(await addressed(chat.id, lids)), ...change });
  }
  return states;
};

/**
 * rc14 runs an account's first app state sync (archive, pin, mute, read marks) once, when the first
 * history notification comes, and counts it done in `creds.accountSyncCounter` (Socket/chats.js). A
 * link closed in between (a stop right after linking) leaves it undone: the next connection waits 20 s
 * for a history notification, and runs the sync if one comes (the network delivers again the chunks
 * not yet receipted); if none comes, it counts the sync done without running it. Here a link opened
 * with history taken and nothing counted runs the sync itself in that case, once rc14 has counted it.
 * `historyTaken`: this link took a history notification (rc14 runs the sync with it).
 */
export const resumeFirstAppStateSync = (
  sock: Pick<WASocket, 'ev' | 'resyncAppState'>,
  creds: Pick<AuthenticationCreds, 'processedHistoryMessages' | 'accountSyncCounter'>,
  log: Logger,
): { historyTaken: () => void } => {
  if (!creds.processedHistoryMessages?.length || creds.accountSyncCounter) return { historyTaken: () => {} };
  let taken = false;
  let counted = false;
  sock.ev.on('creds.update', ({ accountSyncCounter }) => {
    if (counted || !accountSyncCounter) return;
    counted = true;
    if (taken) return;
    log.info('running the first app state sync, which a link closed after taking history left undone');
    sock.resyncAppState(ALL_WA_PATCH_NAMES, false).then(
      () => log.info('first app state sync done'),
      (err: unknown) => log.warn({ err }, 'the first app state sync failed; the chats get their state at its next change'),
    );
  });
  return {
    historyTaken: () => {
      taken = true;
    },
  };
};
