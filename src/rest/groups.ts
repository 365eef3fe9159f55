import { z } from 'zod';
import {
  actionSchema,
  countGroups,
  createGroup,
  createSchema,
  getGroup,
  groupInviteCode,
  groupMembers,
  joinGroup,
  joinSchema,
  leaveGroup,
  listGroups,
  patchSchema,
  privacySchema,
  promoteParticipants,
  promoteSchema,
  sendInteractiveToGroup,
  sendMediaToGroup,
  sendToGroup,
  setGroupPrivacy,
  textSchema,
  updateGroup,
  updateParticipants,
} from '../resolvers/groups.ts';
import { groupInteractiveSchema, groupMediaSchema } from '../resolvers/messages.ts';
import { object, ok, sent } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Groups';
const base = '/sessions/:sessionId/groups';
const G = `${base}/:groupId`;

const group = z
  .object({
    id: z.string(),
    subject: z.string(),
    desc: z.string(),
    participants: z.array(
      z.object({
        id: z.string().describe('the phone-number JID when the network shows it, else the LID JID'),
        phoneNumber: z.string().nullable().describe('extension: the phone number (digits), null when the member hides it'),
        lid: z.string().nullable().describe("extension: the member's LID, when the network told it"),
        admin: z.enum(['admin', 'superadmin']).optional(),
      }),
    ),
  })
  .loose()
  .meta({ id: 'Group' });
const participantChange = object('`{ok, action, participants}`');

/** `groups/join` before `groups/:groupId`, which would otherwise read "join" as a group id. */
export const groupsRoutes: Route[] = [
  route({
    method: 'get',
    path: base,
    summary: 'WhatsApp groups the session is in',
    tag,
    response: z.array(group),
    handler: ({ ctx, params }) => listGroups(ctx, params.sessionId),
  }),
  route({
    method: 'get',
    path: '/sessions/:sessionId/groups-count',
    summary: 'How many groups',
    tag,
    response: object('`{count}`'),
    handler: ({ ctx, params }) => countGroups(ctx, params.sessionId),
  }),
  route({
    method: 'post',
    path: base,
    summary: 'Create a group',
    tag,
    body: createSchema,
    response: group,
    handler: ({ ctx, params, body }) => createGroup(ctx, params.sessionId, body),
  }),
  route({
    method: 'post',
    path: `${base}/join`,
    summary: 'Join by invite code',
    tag,
    body: joinSchema,
    response: object('`{ok, groupId}`'),
    handler: ({ ctx, params, body }) => joinGroup(ctx, params.sessionId, body),
  }),
  route({
    method: 'get',
    path: G,
    summary: 'Group details',
    tag,
    response: group,
    handler: ({ ctx, params }) => getGroup(ctx, params.sessionId, params.groupId),
  }),
  route({
    method: 'get',
    path: `${G}/members`,
    summary: 'Group members',
    tag,
    response: object('members, by phone-number JID'),
    handler: ({ ctx, params }) => groupMembers(ctx, params.sessionId, params.groupId),
  }),
  route({
    method: 'patch',
    path: G,
    summary: 'Change subject or description',
    tag,
    body: patchSchema,
    response: object('the change'),
    handler: ({ ctx, params, body }) => updateGroup(ctx, params.sessionId, params.groupId, body),
  }),
  route({
    method: 'delete',
    path: G,
    summary: 'Leave the group',
    tag,
    response: ok,
    handler: ({ ctx, params }) => leaveGroup(ctx, params.sessionId, params.groupId),
  }),
  route({
    method: 'post',
    path: `${G}/participants`,
    summary: 'Add, remove, promote or demote participants',
    tag,
    body: actionSchema,
    response: participantChange,
    handler: ({ ctx, params, body }) => updateParticipants(ctx, params.sessionId, params.groupId, body),
  }),
  route({
    method: 'patch',
    path: `${G}/privacy`,
    summary: 'Only admins may send',
    tag,
    body: privacySchema,
    response: object('the setting'),
    handler: ({ ctx, params, body }) => setGroupPrivacy(ctx, params.sessionId, params.groupId, body),
  }),
  route({
    method: 'post',
    path: `${G}/promote`,
    summary: 'Make participants admins',
    tag,
    body: promoteSchema,
    response: participantChange,
    handler: ({ ctx, params, body }) => promoteParticipants(ctx, params.sessionId, params.groupId, body, 'promote'),
  }),
  route({
    method: 'post',
    path: `${G}/demote`,
    summary: 'Make admins participants',
    tag,
    body: promoteSchema,
    response: participantChange,
    handler: ({ ctx, params, body }) => promoteParticipants(ctx, params.sessionId, params.groupId, body, 'demote'),
  }),
  route({
    method: 'get',
    path: `${G}/invite-code`,
    summary: 'The invite code',
    tag,
    response: object('`{inviteCode, ...}`'),
    handler: ({ ctx, params }) => groupInviteCode(ctx, params.sessionId, params.groupId),
  }),
  route({
    method: 'post',
    path: `${G}/send`,
    summary: 'Send a text to the group',
    tag,
    body: textSchema,
    response: sent,
    idempotent: true,
    handler: ({ ctx, params, body }) => sendToGroup(ctx, params.sessionId, params.groupId, body),
  }),
  route({
    method: 'post',
    path: `${G}/send-media`,
    summary: 'Send media to the group',
    tag,
    body: (settings) => groupMediaSchema(settings.MEDIA_ALLOW_PRIVATE),
    response: sent,
    idempotent: true,
    handler: ({ ctx, params, body }) => sendMediaToGroup(ctx, params.sessionId, params.groupId, body),
  }),
  route({
    method: 'post',
    path: `${G}/send-interactive`,
    summary: 'Send buttons or a list to the group',
    tag,
    body: groupInteractiveSchema,
    response: sent,
    idempotent: true,
    handler: ({ ctx, params, body }) => sendInteractiveToGroup(ctx, params.sessionId, params.groupId, body),
  }),
];
