import { z } from 'zod';
import {
  addContactGroupMembers,
  contactGroupView,
  createContactGroup,
  createSchema,
  deleteContactGroup,
  listContactGroups,
  membersSchema,
  removeContactGroupMember,
} from '../resolvers/contact-groups.ts';
import { object, ok } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Contact groups';

const contactGroup = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    color: z.string(),
    isSmartGroup: z.boolean(),
    contactCount: z.number().int(),
  })
  .meta({ id: 'ContactGroup' });

/** Mounted before the contacts routes so `/contacts/groups` is never read as a JID. */
export const contactGroupsRoutes: Route[] = [
  route({
    method: 'get',
    path: '/contacts/groups',
    summary: 'List contact groups',
    tag,
    response: z.array(contactGroup),
    handler: async ({ ctx }) => (await listContactGroups(ctx)).map(contactGroupView),
  }),
  route({
    method: 'post',
    path: '/contacts/groups',
    summary: 'Create a contact group',
    tag,
    body: createSchema,
    response: contactGroup,
    status: 201,
    handler: async ({ ctx, body }) => contactGroupView(await createContactGroup(ctx, body)),
  }),
  route({
    method: 'post',
    path: '/contacts/groups/:groupId/members',
    summary: 'Add contacts to a group',
    tag,
    body: membersSchema,
    response: object('`{ok, added, errors}`'),
    handler: ({ ctx, params, body }) => addContactGroupMembers(ctx, params.groupId, body),
  }),
  route({
    method: 'delete',
    path: '/contacts/groups/:groupId/members/:jid',
    summary: 'Remove a contact from a group',
    tag,
    response: ok,
    handler: ({ ctx, params }) => removeContactGroupMember(ctx, params.groupId, params.jid),
  }),
  route({
    method: 'delete',
    path: '/contacts/groups/:groupId',
    summary: 'Delete a contact group (extension); its contacts stay in the address book',
    tag,
    response: ok,
    handler: ({ ctx, params }) => deleteContactGroup(ctx, params.groupId),
  }),
];
