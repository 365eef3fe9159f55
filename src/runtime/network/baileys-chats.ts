import { isJidGroup, isLidUser, jidNormalizedUser } from 'baileys';
import type { BinaryNode, WACallEvent, WAMessageKey, WASocket } from 'baileys';
import type { Logger } from 'pino';
import type { ChatEvent, ChatOps, PresenceState } from '../ports/network.ts';
import { completePerson, personOf, plainUser, shownAddress } from './baileys-lids.ts';
import type { LidBook, Person } from './baileys-lids.ts';
import type { Reach } from './baileys-reach.ts';

/** How many unread messages are kept per chat, and how many chats: a chat read later than that is read by id. */
const UNREAD_PER_CHAT = 500;
const UNREAD_CHATS = 2048;

/**
 * Received messages not yet marked read, by chat: each chat's map is filed under every address the
 * network gave it (its LID and its phone-number JID), so either finds it.
 */
export class UnreadMessages {
  private readonly chats = new Map<string, Map<string, WAMessageKey>>();

  add(addresses: string[], key: WAMessageKey): void {
    if (!key.id) return;
    let chat = addresses.map((a) => this.chats.get(a)).find((c) => c !== undefined);
    if (!chat) chat = new Map();
    for (const address of addresses) {
      this.chats.delete(address);
      this.chats.set(address, chat);
    }
    chat.set(key.id, key);
    if (chat.size > UNREAD_PER_CHAT) chat.delete(chat.keys().next().value ?? key.id);
    while (this.chats.size > UNREAD_CHATS) {
      const oldest = this.chats.keys().next().value;
      if (oldest === undefined) break;
      this.chats.delete(oldest);
    }
  }

  of(address: string): Map<string, WAMessageKey> | undefined {
    return this.chats.get(address);
  }
}

/**
 * The network's answers for a picture it will not show: 404 item-not-found (none) and 401
 * not-authorized (hidden from us); rc14's query() throws them as a Boom whose data is the code.
 */
const noPicture = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && 'data' in err && (err.data === 404 || err.data === 401);

/** A presence the network sent: who (`participant` in a group), in which chat, and what. */
export interface PresenceNode {
  chatJid: string;
  participant: string;
  presence: PresenceState;
  /** seconds, when an offline contact shares it */
  lastSeen: number | null;
}

/**
 * Reads a `presence` stanza (online, offline with `last`) or a `chatstate` one (its first child:
 * `composing`, `composing media=audio`, `paused`). rc14's handlePresenceUpdate reports `paused` as
 * `available`, which a user could not tell from coming online; so the service reads the nodes itself.
 */
export const presenceOfNode = (node: BinaryNode): PresenceNode | undefined => {
  const chatJid = node.attrs.from;
  if (!chatJid) return undefined;
  const participant = node.attrs.participant || chatJid;
  if (node.tag === 'presence') {
    const last = node.attrs.last;
    return {
      chatJid,
      participant,
      presence: node.attrs.type === 'unavailable' ? 'unavailable' : 'available',
      lastSeen: last && last !== 'deny' && Number.isFinite(Number(last)) ? Number(last) : null,
    };
  }
  const child = Array.isArray(node.content) ? node.content[0] : undefined;
  if (!child) return undefined;
  const presence: PresenceState | undefined =
    child.attrs?.media === 'audio' ? 'recording' : child.tag === 'composing' ? 'composing' : child.tag === 'paused' ? 'paused' : undefined;
  return presence ? { chatJid, participant, presence, lastSeen: null } : undefined;
};

interface ChatsDeps {
  sock: WASocket;
  reach: Reach;
  lids: LidBook;
  /** people the network named both ways (the address book and the mapping store learn them) */
  learn: (people: Person[]) => void;
  onEvent: (event: ChatEvent) => void;
  log: Logger;
}

/** Read marks, number checks, presence and calls over one Baileys socket. */
export const baileysChats = ({ sock, reach, lids, learn, onEvent, log }: ChatsDeps): ChatOps => {
  const unread = new UnreadMessages();

  sock.ev.on('messages.upsert', ({ messages, type }) => {
    if (type !== 'notify') return;
    for (const { key } of messages) {
      if (key.fromMe || !key.remoteJid || key.remoteJid.endsWith('@broadcast') || key.remoteJid.endsWith('@newsletter')) continue;
      const addresses = [plainUser(key.remoteJid), plainUser(key.remoteJidAlt)].filter((a): a is string => a !== undefined);
      unread.add(addresses, key);
    }
  });

  const personFor = async (jid: string, alt?: string): Promise<Person> => {
    const person = await completePerson(personOf(jid, alt), lids);
    learn([person]);
    return person;
  };

  // The raw stanzas rather than Baileys' presence.update (see presenceOfNode); one at a time, so a
  // contact's composing is passed on before the paused that follows it.
  let presencesInOrder = Promise.resolve();
  const onPresenceNode = (node: BinaryNode) => {
    const read = presenceOfNode(node);
    if (!read) return;
    const { chatJid, participant, presence, lastSeen } = read;
    presencesInOrder = presencesInOrder
      .then(async () => {
        const person = await personFor(participant);
        const chat = isJidGroup(chatJid) ? { pn: undefined, lid: undefined, other: chatJid } : await personFor(chatJid);
        onEvent({
          kind: 'presence',
          chatJid: shownAddress(chat) ?? chatJid,
          from: shownAddress(person) ?? participant,
          fromLid: person.lid ?? null,
          presence,
          lastSeen: lastSeen ? lastSeen * 1000 : null,
        });
      })
      .catch((err: unknown) => log.warn({ err }, 'passing on a presence update failed'));
  };
  sock.ws.on('CB:presence', onPresenceNode);
  sock.ws.on('CB:chatstate', onPresenceNode);

  sock.ev.on('call', (calls: WACallEvent[]) => {
    void (async () => {
      for (const call of calls) {
        const person = await personFor(call.from, call.callerPn);
        onEvent({
          kind: 'call',
          callId: call.id,
          from: shownAddress(person) ?? call.from,
          fromLid: person.lid ?? null,
          callerJid: call.from,
          groupJid: call.groupJid ?? null,
          isVideo: call.isVideo ?? false,
          status: call.status,
          offline: call.offline,
          at: call.date.getTime(),
        });
      }
    })().catch((err: unknown) => log.warn({ err }, 'passing on a call failed'));
  });

  /** The unread messages of a chat, by whichever address it was given. */
  const unreadOf = async (chatJid: string): Promise<Map<string, WAMessageKey> | undefined> => {
    const found = unread.of(chatJid);
    if (found || isJidGroup(chatJid)) return found;
    const other = isLidUser(chatJid) ? await lids.pnForLid(chatJid) : await lids.lidForPn(chatJid);
    return other ? unread.of(other) : undefined;
  };

  return {
    checkNumbers: async (jids) => {
      const found = await reach.lookUp(jids.map((jid) => jidNormalizedUser(jid)));
      return jids.map((jid) => {
        const answer = found.get(jidNormalizedUser(jid));
        return { jid, onNetwork: answer?.exists ?? false, lid: answer?.lid ?? null };
      });
    },
    markRead: async (chatJid, waMessageIds) => {
      const chat = await unreadOf(chatJid);
      const keys: WAMessageKey[] = [];
      const unknown: string[] = [];
      for (const id of waMessageIds ?? [...(chat?.keys() ?? [])]) {
        const key = chat?.get(id);
        // A 1:1 receipt needs only the chat and the id, so a message this link did not see (received
        // before a restart) is marked all the same; in a group it needs the sender, which only the message tells.
        if (key) keys.push(key);
        else if (!isJidGroup(chatJid)) keys.push({ remoteJid: chatJid, id, fromMe: false });
        else unknown.push(id);
      }
      if (keys.length > 0) await sock.readMessages(keys);
      for (const key of keys) if (key.id) chat?.delete(key.id);
      return { read: keys.map((key) => key.id ?? ''), unknown };
    },
    subscribePresence: async (jid) => {
      await sock.presenceSubscribe(jid);
    },
    setOwnPresence: async (presence) => {
      // Baileys sends our presence only with a push name, which a link paired without one lacks; the
      // network takes the stanza with any name.
      const name = sock.authState.creds.me?.name?.replace(/@/g, '') || 'WhatsApp';
      await sock.sendNode({ tag: 'presence', attrs: { name, type: presence } });
    },
    rejectCall: async (callId, callerJid) => {
      await sock.rejectCall(callId, callerJid);
    },
    profilePicture: async (jid, size) => {
      try {
        return (await sock.profilePictureUrl(jid, size)) ?? null;
      } catch (err) {
        if (noPicture(err)) return null;
        throw err;
      }
    },
    // Baileys' PDO request to the account's phone (Socket/messages-recv.js fetchMessageHistory).
    fetchHistory: (count, oldest) => sock.fetchMessageHistory(count, oldest.key, oldest.timestampMs),
  };
};
