import { LRUCache } from 'lru-cache';
import type { Deps } from './context.ts';

/*
 * A group chat's name is the group's subject (docs/conversations.md, Chats): asked of the network once a
 * group chat without a name is stored, and changed when the network tells a new one (or the API set it).
 */

/** A nameless group asked about recently is not asked again before this (a group we left answers an error each time). */
const ASK_AGAIN_MS = 10 * 60_000;

/** Groups looked at, per session: at most one look (and one question) per group per ASK_AGAIN_MS on this node. */
const asked = new LRUCache<string, true>({ max: 10_000, ttl: ASK_AGAIN_MS });

/** A group's subject became known or changed: its stored chat takes it as its name (and is pushed when it changed). */
export const groupSubject = async (
  deps: Pick<Deps, 'db' | 'events'>,
  sessionId: string,
  groupJid: string,
  subject: string,
): Promise<void> => {
  if (!subject) return;
  const { count } = await deps.db.chat.updateMany({
    where: { sessionId, chatId: groupJid, kind: 'group', OR: [{ name: null }, { name: { not: subject } }] },
    data: { name: subject },
  });
  if (count > 0) deps.events.publish('chatUpdates', sessionId, { sessionId, chatId: groupJid });
};

/**
 * Group chats among `chatIds` that the store holds without a name ask the session's link for the group's
 * subject (one network query each, not repeated within ASK_AGAIN_MS). Nothing is asked while the session
 * is not linked here; a failure is logged and the chat stays nameless until a later message asks again.
 */
export const nameGroupChats = async (
  deps: Pick<Deps, 'db' | 'events' | 'sessions' | 'logger'>,
  sessionId: string,
  chatIds: string[],
): Promise<void> => {
  const groups = [...new Set(chatIds.filter((id) => id.endsWith('@g.us')))].filter((id) => !asked.has(`${sessionId}\u0000${id}`));
  if (groups.length === 0) return;
  const link = deps.sessions.link(sessionId);
  if (!link) return;
  // Looked at once per ASK_AGAIN_MS, named or not: a busy group costs no query per message.
  for (const id of groups) asked.set(`${sessionId}\u0000${id}`, true);
  const nameless = await deps.db.chat.findMany({
    where: { sessionId, chatId: { in: groups }, kind: 'group', name: null },
    select: { chatId: true },
  });
  for (const { chatId } of nameless) {
    try {
      const group = await link.groups.metadata(chatId);
      await groupSubject(deps, sessionId, chatId, group.subject);
    } catch (err) {
      deps.logger.info({ err, sessionId, chatId }, "reading a group's subject for its chat's name failed");
    }
  }
};
