import { jidNormalizedUser } from 'baileys';
import type { GroupMetadata, WASocket } from 'baileys';
import type { GroupInfo, GroupOps } from '../ports/network.ts';

/** Members by phone-number JID when the network tells us one, since that is how users address them. */
export const groupInfo = (meta: GroupMetadata): GroupInfo => ({
  id: meta.id,
  subject: meta.subject ?? '',
  desc: meta.desc ?? '',
  announce: Boolean(meta.announce),
  owner: meta.ownerPn ?? meta.owner,
  creation: meta.creation,
  participants: meta.participants.map((p) => ({
    id: jidNormalizedUser(p.phoneNumber ?? p.id),
    ...(p.admin ? { admin: p.admin } : {}),
  })),
});

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

export const baileysGroups = (sock: WASocket, cache: GroupCache): GroupOps => ({
  list: async () => Object.values(await sock.groupFetchAllParticipating()).map(groupInfo),
  create: async (subject, participants) => groupInfo(await sock.groupCreate(subject, participants)),
  join: async (inviteCode) => {
    const id = await sock.groupAcceptInvite(inviteCode);
    if (!id) throw new Error('the invite code was not accepted');
    return id;
  },
  metadata: async (groupId) => groupInfo(cache.set(await sock.groupMetadata(groupId))),
  setSubject: (groupId, subject) => changing(cache, groupId, sock.groupUpdateSubject(groupId, subject)),
  setDescription: (groupId, description) => changing(cache, groupId, sock.groupUpdateDescription(groupId, description)),
  leave: (groupId) => changing(cache, groupId, sock.groupLeave(groupId)),
  participants: async (groupId, jids, action) =>
    (await changing(cache, groupId, sock.groupParticipantsUpdate(groupId, jids, action))).map((r, i) => ({
      jid: r.jid ?? jids[i] ?? '',
      status: r.status,
    })),
  setAdminOnly: (groupId, adminOnly) =>
    changing(cache, groupId, sock.groupSettingUpdate(groupId, adminOnly ? 'announcement' : 'not_announcement')),
  inviteCode: async (groupId) => {
    const code = await sock.groupInviteCode(groupId);
    if (!code) throw new Error('the network gave no invite code');
    return code;
  },
});
