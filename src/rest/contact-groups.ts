import { Router } from 'express';
import {
  addContactGroupMembers,
  contactGroupView,
  createContactGroup,
  listContactGroups,
  removeContactGroupMember,
} from '../resolvers/contact-groups.ts';
import { ctxOf } from './context.ts';

/** Mounted before the contacts router so `/contacts/groups` is never read as a JID. */
export const contactGroupsRouter = (): Router =>
  Router()
    .get('/contacts/groups', async (_req, res) => {
      res.json((await listContactGroups(ctxOf(res))).map(contactGroupView));
    })
    .post('/contacts/groups', async (req, res) => {
      res.status(201).json(contactGroupView(await createContactGroup(ctxOf(res), req.body)));
    })
    .post('/contacts/groups/:groupId/members', async (req, res) => {
      res.json(await addContactGroupMembers(ctxOf(res), req.params.groupId, req.body));
    })
    .delete('/contacts/groups/:groupId/members/:jid', async (req, res) => {
      res.json(await removeContactGroupMember(ctxOf(res), req.params.groupId, req.params.jid));
    });
