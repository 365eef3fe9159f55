import { z } from 'zod';
import type { GroupInfo, GroupMember, NetworkLink, ParticipantAction } from '../runtime/ports/network.ts';
import type { RequestContext } from './context.ts';
import { deliverNow, requireLink } from './delivery.ts';
import { DomainError } from './errors.ts';
import { groupSubject } from './group-names.ts';
import { JID_MESSAGE, jidSchema, toJid } from './jids.ts';
import type { SendAnswer } from './messages.ts';
import { replyContext, replyFields } from './message-actions.ts';
import { groupInteractiveSchema, groupMediaSchema, mediaDelivery, sendAnswer, sendInteractiveTo, textDelivery } from './messages.ts';
import { ownSession } from './sessions.ts';
import { parseInput } from './validate.ts';
import { admit } from './idempotency.ts';

export interface GroupView {
  id: string;
  subject: string;
  desc: string;
  participants: GroupMember[];
}

export const groupView = (g: GroupInfo): GroupView => ({ id: g.id, subject: g.subject, desc: g.desc, participants: g.participants });

const participantsSchema = z.array(jidSchema).min(1, 'at least one participant is required').max(256);
export const createSchema = z.object({ subject: z.string().trim().min(1, 'is required').max(100), participants: participantsSchema });
export const joinSchema = z.object({
  inviteCode: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_-]{6,64}$/, 'must be the invite code only, not the full link'),
});
export const patchSchema = z
  .object({ subject: z.string().trim().min(1).max(100).optional(), description: z.string().max(2048).optional() })
  .refine((v) => v.subject !== undefined || v.description !== undefined, { message: 'give subject or description', path: ['subject'] });
/** What updateParticipants can do (ParticipantAction in GraphQL). */
export const participantActionSchema = z.enum(['add', 'remove', 'promote', 'demote']);
export const actionSchema = z.object({ participants: participantsSchema, action: participantActionSchema });
export const promoteSchema = z.object({ participants: participantsSchema });
export const privacySchema = z.object({ adminOnly: z.boolean({ message: 'is required (true or false)' }) });
export const textSchema = z.object({
  message: z.string().min(1, 'cannot be empty').max(65_536),
  ...replyFields,
});
/** Group path segments take a group JID or its bare id. */
export const groupJidFrom = (value: string): string => {
  const raw = value.trim();
  const jid = /^[\d-]+$/.test(raw) ? `${raw}@g.us` : toJid(raw);
  if (!jid?.endsWith('@g.us')) {
    throw new DomainError('VALIDATION_FAILED', 'Invalid group id', {
      details: [{ path: 'groupId', message: `must be a group JID (<id>@g.us); ${JID_MESSAGE}` }],
    });
  }
  return jid;
};

/** The session's live link after the usual order of checks: body (done by the caller), 404, then 409. */
const connectedLink = async (ctx: RequestContext, sessionId: string): Promise<NetworkLink> =>
  requireLink(ctx, await ownSession(ctx, sessionId));

/**
 * Baileys reports a group we are not in as a 404-ish error; everything else the network refused is a 502.
 * `forbiddenIsNotFound` is for reads of the group itself, where WhatsApp answers 403 forbidden to a
 * non-participant (elsewhere a 403 can mean "not an admin", which is no reason for a 404).
 */
const onNetwork = async <T>(what: string, run: () => Promise<T>, options: { forbiddenIsNotFound?: boolean } = {}): Promise<T> => {
  try {
    return await run();
  } catch (err) {
    if (err instanceof DomainError) throw err;
    const status = (err as { output?: { statusCode?: number } }).output?.statusCode;
    const message = err instanceof Error ? err.message : String(err);
    if (status === 404 || /item-not-found|not-found/i.test(message)) throw new DomainError('NOT_FOUND', 'Group not found');
    if (options.forbiddenIsNotFound && (status === 403 || /^forbidden$/i.test(message)))
      throw new DomainError('NOT_FOUND', 'Group not found');
    throw new DomainError('NETWORK_ERROR', `The network refused to ${what}: ${message}`);
  }
};

/**
 * The group as the network shows it to a participant; a 404 for a group that does not exist or that the
 * session is not (or no longer) in. Sends and leaves ask first, so that such a group is refused before a
 * record is written or anything goes out: a leave of it would otherwise succeed silently, and a send fail
 * as a 502 with a FAILED record.
 */
const memberGroup = (link: NetworkLink, groupId: string): Promise<GroupInfo> =>
  onNetwork('read the group', () => link.groups.metadata(groupId), { forbiddenIsNotFound: true });

export const listGroups = async (ctx: RequestContext, sessionId: string): Promise<GroupView[]> => {
  const link = await connectedLink(ctx, sessionId);
  return (await onNetwork('list groups', () => link.groups.list())).map(groupView);
};

export const countGroups = async (ctx: RequestContext, sessionId: string): Promise<{ count: number }> => ({
  count: (await listGroups(ctx, sessionId)).length,
});

export const createGroup = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<GroupView> => {
  const body = parseInput(createSchema, input);
  const link = await connectedLink(ctx, sessionId);
  return groupView(await onNetwork('create the group', () => link.groups.create(body.subject, body.participants)));
};

export const joinGroup = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<{ ok: true; groupId: string }> => {
  const { inviteCode } = parseInput(joinSchema, input);
  const link = await connectedLink(ctx, sessionId);
  return { ok: true, groupId: await onNetwork('join the group', () => link.groups.join(inviteCode)) };
};

export const getGroup = async (ctx: RequestContext, sessionId: string, groupIdParam: string): Promise<GroupView> => {
  const groupId = groupJidFrom(groupIdParam);
  const link = await connectedLink(ctx, sessionId);
  return groupView(await memberGroup(link, groupId));
};

export const groupMembers = async (
  ctx: RequestContext,
  sessionId: string,
  groupIdParam: string,
): Promise<{ groupId: string; count: number; members: GroupMember[] }> => {
  const group = await getGroup(ctx, sessionId, groupIdParam);
  return { groupId: group.id, count: group.participants.length, members: group.participants };
};

export const updateGroup = async (
  ctx: RequestContext,
  sessionId: string,
  groupIdParam: string,
  input: unknown,
): Promise<{ ok: true; subject?: string; description?: string }> => {
  const groupId = groupJidFrom(groupIdParam);
  const body = parseInput(patchSchema, input);
  const link = await connectedLink(ctx, sessionId);
  if (body.subject !== undefined) {
    await onNetwork('change the subject', () => link.groups.setSubject(groupId, body.subject ?? ''));
    // The network tells the other members' devices, not the one that made the change: its chat is named here.
    await groupSubject(ctx, sessionId, groupId, body.subject);
  }
  if (body.description !== undefined) {
    await onNetwork('change the description', () => link.groups.setDescription(groupId, body.description ?? ''));
  }
  return { ok: true, ...body };
};

export const leaveGroup = async (ctx: RequestContext, sessionId: string, groupIdParam: string): Promise<{ ok: true }> => {
  const groupId = groupJidFrom(groupIdParam);
  const link = await connectedLink(ctx, sessionId);
  await memberGroup(link, groupId);
  await onNetwork('leave the group', () => link.groups.leave(groupId));
  return { ok: true };
};

export interface ParticipantsAnswer {
  ok: true;
  action: ParticipantAction;
  participants: string[];
}

const changeParticipants = async (
  ctx: RequestContext,
  sessionId: string,
  groupId: string,
  jids: string[],
  action: ParticipantAction,
): Promise<ParticipantsAnswer> => {
  const link = await connectedLink(ctx, sessionId);
  const outcomes = await onNetwork(`${action} participants`, () => link.groups.participants(groupId, jids, action));
  const refused = outcomes.filter((o) => o.status !== '200');
  if (refused.length === outcomes.length && refused.length > 0) {
    throw new DomainError('NETWORK_ERROR', `The network refused to ${action} ${refused.map((r) => `${r.jid} (${r.status})`).join(', ')}`);
  }
  return { ok: true, action, participants: outcomes.filter((o) => o.status === '200').map((o) => o.jid) };
};

export const updateParticipants = async (ctx: RequestContext, sessionId: string, groupIdParam: string, input: unknown) => {
  const groupId = groupJidFrom(groupIdParam);
  const body = parseInput(actionSchema, input);
  return changeParticipants(ctx, sessionId, groupId, body.participants, body.action);
};

export const promoteParticipants = async (
  ctx: RequestContext,
  sessionId: string,
  groupIdParam: string,
  input: unknown,
  action: 'promote' | 'demote',
) => {
  const groupId = groupJidFrom(groupIdParam);
  const body = parseInput(promoteSchema, input);
  return changeParticipants(ctx, sessionId, groupId, body.participants, action);
};

export const setGroupPrivacy = async (
  ctx: RequestContext,
  sessionId: string,
  groupIdParam: string,
  input: unknown,
): Promise<{ ok: true; adminOnly: boolean }> => {
  const groupId = groupJidFrom(groupIdParam);
  const { adminOnly } = parseInput(privacySchema, input);
  const link = await connectedLink(ctx, sessionId);
  await onNetwork('change the group setting', () => link.groups.setAdminOnly(groupId, adminOnly));
  return { ok: true, adminOnly };
};

export const groupInviteCode = async (
  ctx: RequestContext,
  sessionId: string,
  groupIdParam: string,
): Promise<{ groupId: string; inviteCode: string }> => {
  const groupId = groupJidFrom(groupIdParam);
  const link = await connectedLink(ctx, sessionId);
  return { groupId, inviteCode: await onNetwork('give an invite code', () => link.groups.inviteCode(groupId)) };
};

export const sendToGroup = async (ctx: RequestContext, sessionId: string, groupIdParam: string, input: unknown): Promise<SendAnswer> => {
  const groupId = groupJidFrom(groupIdParam);
  const { message, ...extras } = parseInput(textSchema, input);
  await admit(ctx);
  const session = await ownSession(ctx, sessionId);
  // an unknown quoted message is a 404, before the 409 of a session that is not connected
  const delivery = await textDelivery(ctx, sessionId, groupId, message, extras);
  await memberGroup(requireLink(ctx, session), groupId);
  const row = await deliverNow(ctx, session, delivery);
  return sendAnswer(row);
};

export const sendMediaToGroup = async (
  ctx: RequestContext,
  sessionId: string,
  groupIdParam: string,
  input: unknown,
): Promise<SendAnswer> => {
  const groupId = groupJidFrom(groupIdParam);
  const { quotedMessageId, mentions, ...body } = parseInput(groupMediaSchema(ctx.settings.MEDIA_ALLOW_PRIVATE), input);
  await admit(ctx);
  const session = await ownSession(ctx, sessionId);
  const reply = await replyContext(ctx, sessionId, { quotedMessageId, mentions });
  // before the download: no media is fetched for a group we cannot send to
  await memberGroup(requireLink(ctx, session), groupId);
  const row = await deliverNow(ctx, session, await mediaDelivery(ctx, groupId, body, 'url', reply));
  return sendAnswer(row);
};

export const sendInteractiveToGroup = async (
  ctx: RequestContext,
  sessionId: string,
  groupIdParam: string,
  input: unknown,
): Promise<SendAnswer> => {
  const groupId = groupJidFrom(groupIdParam);
  const body = parseInput(groupInteractiveSchema, input);
  await admit(ctx);
  await ownSession(ctx, sessionId);
  // an unknown quoted message is a 404, before the 409 of a session that is not connected
  await replyContext(ctx, sessionId, { quotedMessageId: body.quotedMessageId });
  // a refusal inside sendInteractiveTo would count against buttons and could turn them off for the session
  await memberGroup(await connectedLink(ctx, sessionId), groupId);
  return sendInteractiveTo(ctx, sessionId, groupId, body);
};
