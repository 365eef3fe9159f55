import { Router } from 'express';
import type { Request } from 'express';
import {
  countGroups,
  createGroup,
  getGroup,
  groupInviteCode,
  groupMembers,
  joinGroup,
  leaveGroup,
  listGroups,
  promoteParticipants,
  sendInteractiveToGroup,
  sendMediaToGroup,
  sendToGroup,
  setGroupPrivacy,
  updateGroup,
  updateParticipants,
} from '../resolvers/groups.ts';
import { ctxOf } from './context.ts';
import { idempotent } from './idempotent.ts';
import { sessionParam } from './messages.ts';

const groupParam = (req: Request): string => String(req.params.groupId);
const base = '/sessions/:sessionId/groups';

export const groupsRouter = (): Router =>
  Router()
    .get(base, async (req, res) => {
      res.json(await listGroups(ctxOf(res), sessionParam(req)));
    })
    .get('/sessions/:sessionId/groups-count', async (req, res) => {
      res.json(await countGroups(ctxOf(res), sessionParam(req)));
    })
    .post(base, async (req, res) => {
      res.json(await createGroup(ctxOf(res), sessionParam(req), req.body));
    })
    .post(`${base}/join`, async (req, res) => {
      res.json(await joinGroup(ctxOf(res), sessionParam(req), req.body));
    })
    .get(`${base}/:groupId`, async (req, res) => {
      res.json(await getGroup(ctxOf(res), sessionParam(req), groupParam(req)));
    })
    .get(`${base}/:groupId/members`, async (req, res) => {
      res.json(await groupMembers(ctxOf(res), sessionParam(req), groupParam(req)));
    })
    .patch(`${base}/:groupId`, async (req, res) => {
      res.json(await updateGroup(ctxOf(res), sessionParam(req), groupParam(req), req.body));
    })
    .delete(`${base}/:groupId`, async (req, res) => {
      res.json(await leaveGroup(ctxOf(res), sessionParam(req), groupParam(req)));
    })
    .post(`${base}/:groupId/participants`, async (req, res) => {
      res.json(await updateParticipants(ctxOf(res), sessionParam(req), groupParam(req), req.body));
    })
    .patch(`${base}/:groupId/privacy`, async (req, res) => {
      res.json(await setGroupPrivacy(ctxOf(res), sessionParam(req), groupParam(req), req.body));
    })
    .post(`${base}/:groupId/promote`, async (req, res) => {
      res.json(await promoteParticipants(ctxOf(res), sessionParam(req), groupParam(req), req.body, 'promote'));
    })
    .post(`${base}/:groupId/demote`, async (req, res) => {
      res.json(await promoteParticipants(ctxOf(res), sessionParam(req), groupParam(req), req.body, 'demote'));
    })
    .get(`${base}/:groupId/invite-code`, async (req, res) => {
      res.json(await groupInviteCode(ctxOf(res), sessionParam(req), groupParam(req)));
    })
    .post(
      `${base}/:groupId/send`,
      idempotent((req, res) => sendToGroup(ctxOf(res), sessionParam(req), groupParam(req), req.body)),
    )
    .post(
      `${base}/:groupId/send-media`,
      idempotent((req, res) => sendMediaToGroup(ctxOf(res), sessionParam(req), groupParam(req), req.body)),
    )
    .post(
      `${base}/:groupId/send-interactive`,
      idempotent((req, res) => sendInteractiveToGroup(ctxOf(res), sessionParam(req), groupParam(req), req.body)),
    );
