import { jidNormalizedUser } from 'baileys';
import type { GroupMetadata, WASocket } from 'baileys';
import type { GroupInfo, GroupOps } from './types.ts';

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

export const baileysGroups = (sock: WASocket): GroupOps => ({
  list: async () => Object.values(await sock.groupFetchAllParticipating()).map(groupInfo),
  create: async (subject, participants) => groupInfo(await sock.groupCreate(subject, participants)),
  join: async (inviteCode) => {
    const id = await sock.groupAcceptInvite(inviteCode);
    if (!id) throw new Error('the invite code was not accepted');
    return id;
  },
  metadata: async (groupId) => groupInfo(await sock.groupMetadata(groupId)),
  setSubject: (groupId, subject) => sock.groupUpdateSubject(groupId, subject),
  setDescription: (groupId, description) => sock.groupUpdateDescription(groupId, description),
  leave: (groupId) => sock.groupLeave(groupId),
  participants: async (groupId, jids, action) =>
    (await sock.groupParticipantsUpdate(groupId, jids, action)).map((r, i) => ({ jid: r.jid ?? jids[i] ?? '', status: r.status })),
  setAdminOnly: (groupId, adminOnly) => sock.groupSettingUpdate(groupId, adminOnly ? 'announcement' : 'not_announcement'),
  inviteCode: async (groupId) => {
    const code = await sock.groupInviteCode(groupId);
    if (!code) throw new Error('the network gave no invite code');
    return code;
  },
});
