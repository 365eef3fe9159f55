import { prismaConnectionHelpers } from '@pothos/plugin-prisma';
import type { ContactGroup as ContactGroupRow, Contact as ContactRow } from '../generated/sqlite/client.ts';
import type { AddMembersResult } from '../resolvers/contact-groups.ts';
import {
  addContactGroupMembers,
  countContactGroups,
  createContactGroup,
  deleteContactGroup,
  getContactGroupRow,
  listContactGroups,
  removeContactGroupMember,
} from '../resolvers/contact-groups.ts';
import { builder, withoutNulls } from './builder.ts';
import { Contact } from './contacts.ts';

export const ContactGroup = builder.prismaObject('ContactGroup', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    color: t.exposeString('color'),
    isSmartGroup: t.exposeBoolean('isSmartGroup'),
    contactCount: t.relationCount('members'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

// Membership rows page the two sides of the join, in a stable order; each edge's node is the contact or the group.
const membersOfGroup = prismaConnectionHelpers(builder, 'ContactGroupMember', {
  cursor: 'groupId_contactId',
  // The id keeps Prisma's selection valid when a client asks for the count only.
  select: (nodeSelection) => ({ contact: nodeSelection({ select: { id: true } }) }),
  query: { orderBy: { contactId: 'asc' } },
  // Typed as the id alone; at run time the row carries every field the client selected.
  resolveNode: (membership) => membership.contact as ContactRow,
});

const groupsOfContact = prismaConnectionHelpers(builder, 'ContactGroupMember', {
  cursor: 'groupId_contactId',
  select: (nodeSelection) => ({ group: nodeSelection({ select: { id: true } }) }),
  query: { orderBy: { groupId: 'asc' } },
  resolveNode: (membership) => membership.group as ContactGroupRow,
});

builder.prismaObjectField('ContactGroup', 'members', (t) =>
  t.connection(
    {
      type: Contact,
      description: 'The contacts in this group.',
      select: (args, ctx, nestedSelection) => ({
        _count: { select: { members: true } },
        members: membersOfGroup.getQuery(args, ctx, nestedSelection),
      }),
      resolve: (group, args, ctx) => ({ ...membersOfGroup.resolve(group.members, args, ctx), totalCount: group._count.members }),
    },
    { fields: (c) => ({ totalCount: c.int({ resolve: (connection) => connection.totalCount }) }) },
  ),
);

builder.prismaObjectField('Contact', 'groups', (t) =>
  t.connection(
    {
      type: ContactGroup,
      description: 'The contact groups this contact is in.',
      select: (args, ctx, nestedSelection) => ({
        _count: { select: { memberships: true } },
        memberships: groupsOfContact.getQuery(args, ctx, nestedSelection),
      }),
      resolve: (contact, args, ctx) => ({
        ...groupsOfContact.resolve(contact.memberships, args, ctx),
        totalCount: contact._count.memberships,
      }),
    },
    { fields: (c) => ({ totalCount: c.int({ resolve: (connection) => connection.totalCount }) }) },
  ),
);

const MemberError = builder.objectRef<AddMembersResult['errors'][number]>('ContactGroupMemberError').implement({
  fields: (t) => ({ jid: t.exposeString('jid'), reason: t.exposeString('reason') }),
});

const AddMembersResultRef = builder.objectRef<AddMembersResult>('AddContactGroupMembersResult').implement({
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    added: t.exposeInt('added'),
    errors: t.field({ type: [MemberError], resolve: (r) => r.errors }),
  }),
});

builder.queryFields((t) => ({
  contactGroups: t.prismaConnection({
    type: 'ContactGroup',
    cursor: 'id',
    description: "This account's contact groups, oldest first.",
    resolve: (query, _root, _args, ctx) => listContactGroups(ctx, query),
    totalCount: (_root, _args, ctx) => countContactGroups(ctx),
  }),
  contactGroup: t.prismaField({
    type: 'ContactGroup',
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => getContactGroupRow(ctx, String(args.id), query),
  }),
}));

builder.mutationFields((t) => ({
  createContactGroup: t.prismaField({
    type: 'ContactGroup',
    args: {
      name: t.arg.string({ required: true }),
      description: t.arg.string(),
      color: t.arg.string(),
      isSmartGroup: t.arg.boolean(),
    },
    resolve: async (query, _root, args, ctx) => getContactGroupRow(ctx, (await createContactGroup(ctx, withoutNulls(args))).id, query),
  }),
  addContactGroupMembers: t.field({
    type: AddMembersResultRef,
    args: { groupId: t.arg.id({ required: true }), jids: t.arg.stringList({ required: true }) },
    resolve: (_root, args, ctx) => addContactGroupMembers(ctx, String(args.groupId), { jids: args.jids }),
  }),
  removeContactGroupMember: t.field({
    type: 'Boolean',
    args: { groupId: t.arg.id({ required: true }), jid: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => (await removeContactGroupMember(ctx, String(args.groupId), args.jid)).ok,
  }),
  deleteContactGroup: t.field({
    type: 'Boolean',
    description: 'Deletes a contact group and its memberships; the contacts stay in the address book.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await deleteContactGroup(ctx, String(args.id))).ok,
  }),
}));
