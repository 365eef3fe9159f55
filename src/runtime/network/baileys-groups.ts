import type { GroupMetadata, WASocket } from 'baileys';
import type { GroupInfo, GroupMember, GroupOps } from '../ports/network.ts';
import { completePerson, personOf, shownAddress } from './baileys-lids.ts';
import type { LidBook, Person } from './baileys-lids.ts';

/**
 * Members by phone-number JID when the network tells us one (from the group, else the mapping store),
 * since that is how users address them; the LID beside it. A member who hides their number is shown
 * by LID, with no phone number.
 */
export const groupInfo = async (meta: GroupMetadata, book?: LidBook): Promise<GroupInfo> => {
  const participants = await Promise.all(
    meta.participants.map(async (p): Promise<GroupMember> => {
      const person = await completePerson(personOf(p.id, p.phoneNumber ?? p.lid), book);
      return {
        id: shownAddress(person) ?? p.id,
        phoneNumber: person.pn ? (person.pn.split('@')[0] ?? null) : null,
        lid: person.lid ?? null,
        ...(p.admin ? { admin: p.admin } : {}),
      };
    }),
  );
  const owner = await completePerson(personOf(meta.owner, meta.ownerPn), book);
  return {
    id: meta.id,
    subject: meta.subject ?? '',
    desc: meta.desc ?? '',
    announce: Boolean(meta.announce),
    owner: shownAddress(owner),
    creation: meta.creation,
    participants,
  };
};

/** The people a group read named both ways. */
export const peopleOf = (info: GroupInfo): Person[] =>
  info.participants.map((p) => ({ ...(p.phoneNumber ? { pn: `${p.phoneNumber}@s.whatsapp.net` } : {}), ...(p.lid ? { lid: p.lid } : {}) }));

/** How long a group read serves Baileys' next send to that group; changes the network reports end it sooner. */
const GROUP_CACHE_MS = 10_000;

/**
 * Group metadata just read, for Baileys' `cachedGroupMetadata`: a group send reads the group first (to
 * answer 404 for a group the session is not in), and Baileys would otherwise read it again to address
 * the message.
 */
export class GroupCache {
  private readonly entries = new Map<string, { meta: GroupMetadata; until: number }>();

  get(groupId: string): GroupMetadata | undefined {
    const entry = this.entries.get(groupId);
    if (entry && entry.until > Date.now()) return entry.meta;
    this.entries.delete(groupId);
    return undefined;
  }

  set(meta: GroupMetadata): GroupMetadata {
    this.entries.set(meta.id, { meta, until: Date.now() + GROUP_CACHE_MS });
    return meta;
  }

  forget(groupId: string | undefined): void {
    if (groupId) this.entries.delete(groupId);
  }
}

/** A change of our own makes the group's cached read stale, whether or not the network took it. */
const changing = async <T>(cache: GroupCache, groupId: string, change: Promise<T>): Promise<T> => {
  try {
    return await change;
  } finally {
    cache.forget(groupId);
  }
};

export const baileysGroups = (sock: WASocket, cache: GroupCache, book?: LidBook, learn?: (people: Person[]) => void): GroupOps => {
  const info = async (meta: GroupMetadata): Promise<GroupInfo> => {
    const found = await groupInfo(meta, book);
    learn?.(peopleOf(found));
    return found;
  };
  /** A participant the network answered by LID is named by number when known: from the answer's `phone_number`, else the store. */
  const shown = async (jid: string, phoneNumber?: string): Promise<string> => {
    const person = await completePerson(personOf(jid, phoneNumber), book);
    learn?.([person]);
    return shownAddress(person) ?? jid;
  };
  return {
    list: async () => Promise.all(Object.values(await sock.groupFetchAllParticipating()).map(info)),
    create: async (subject, participants) => info(await sock.groupCreate(subject, participants)),
    join: async (inviteCode) => {
      const id = await sock.groupAcceptInvite(inviteCode);
      if (!id) throw new Error('the invite code was not accepted');
      return id;
    },
    metadata: async (groupId) => info(cache.set(await sock.groupMetadata(groupId))),
    setSubject: (groupId, subject) => changing(cache, groupId, sock.groupUpdateSubject(groupId, subject)),
    setDescription: (groupId, description) => changing(cache, groupId, sock.groupUpdateDescription(groupId, description)),
    leave: (groupId) => changing(cache, groupId, sock.groupLeave(groupId)),
    participants: async (groupId, jids, action) =>
      Promise.all(
        (await changing(cache, groupId, sock.groupParticipantsUpdate(groupId, jids, action))).map(async (r, i) => ({
          jid: r.jid ? await shown(r.jid, r.content?.attrs.phone_number) : (jids[i] ?? ''),
          status: r.status,
        })),
      ),
    setAdminOnly: (groupId, adminOnly) =>
      changing(cache, groupId, sock.groupSettingUpdate(groupId, adminOnly ? 'announcement' : 'not_announcement')),
    inviteCode: async (groupId) => {
      const code = await sock.groupInviteCode(groupId);
      if (!code) throw new Error('the network gave no invite code');
      return code;
    },
  };
};
