import type { AddMembersResult } from '../resolvers/contact-groups.ts';
import { addContactGroupMembers, createContactGroup, listContactGroups, removeContactGroupMember } from '../resolvers/contact-groups.ts';
import { builder, withoutNulls } from './builder.ts';

builder.prismaObject('ContactGroup', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    color: t.exposeString('color'),
    isSmartGroup: t.exposeBoolean('isSmartGroup'),
    contactCount: t.relationCount('members'),
  }),
});

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

builder.queryField('contactGroups', (t) =>
  t.prismaField({
    type: ['ContactGroup'],
    resolve: (query, _root, _args, ctx) => listContactGroups(ctx, query),
  }),
);

builder.mutationFields((t) => ({
  createContactGroup: t.prismaField({
    type: 'ContactGroup',
    args: {
      name: t.arg.string({ required: true }),
      description: t.arg.string(),
      color: t.arg.string(),
      isSmartGroup: t.arg.boolean(),
    },
    resolve: async (query, _root, args, ctx) => {
      const created = await createContactGroup(ctx, withoutNulls(args));
      return ctx.db.contactGroup.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  addContactGroupMembers: t.field({
    type: AddMembersResultRef,
    args: { groupId: t.arg.string({ required: true }), jids: t.arg.stringList({ required: true }) },
    resolve: (_root, args, ctx) => addContactGroupMembers(ctx, args.groupId, { jids: args.jids }),
  }),
  removeContactGroupMember: t.field({
    type: 'Boolean',
    args: { groupId: t.arg.string({ required: true }), jid: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => (await removeContactGroupMember(ctx, args.groupId, args.jid)).ok,
  }),
}));
