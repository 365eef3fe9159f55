import { queryFromInfo } from '@pothos/plugin-prisma';
import { resolveOffsetConnection } from '@pothos/plugin-relay';
import type { BulkImportResult } from '../resolvers/contacts.ts';
import {
  bulkImportContacts,
  contactsWindow,
  deleteContact,
  getContact,
  parseTags,
  parseVariables,
  updateContact,
  upsertContact,
} from '../resolvers/contacts.ts';
import type { InputFields } from './builder.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../resolvers/paging.ts';
import { builder, withoutNulls } from './builder.ts';

export const Contact = builder.prismaObject('Contact', {
  fields: (t) => ({
    id: t.exposeID('id'),
    jid: t.exposeString('jid'),
    lid: t.exposeString('lid', { nullable: true, description: "the person's LID, once the network told it" }),
    phone: t.exposeString('phone'),
    name: t.exposeString('name'),
    email: t.exposeString('email'),
    tags: t.stringList({ select: { tags: true }, resolve: (row) => parseTags(row.tags) }),
    variables: t.field({ type: 'JSONObject', select: { variables: true }, resolve: (row) => parseVariables(row.variables) }),
    isBlocked: t.exposeBoolean('isBlocked'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const ImportError = builder.objectRef<BulkImportResult['errors'][number]>('ContactImportError').implement({
  fields: (t) => ({
    index: t.exposeInt('index'),
    jid: t.exposeString('jid', { nullable: true }),
    reason: t.exposeString('reason'),
  }),
});

const BulkImportResultRef = builder.objectRef<BulkImportResult>('ContactImportResult').implement({
  fields: (t) => ({
    created: t.exposeInt('created'),
    updated: t.exposeInt('updated'),
    skipped: t.exposeInt('skipped'),
    errors: t.field({ type: [ImportError], resolve: (r) => r.errors }),
  }),
});

const contactFields = (t: InputFields) => ({
  phone: t.string(),
  name: t.string(),
  email: t.string(),
  tags: t.stringList(),
  variables: t.field({ type: 'JSONObject' }),
  isBlocked: t.boolean(),
});

export const ContactInput = builder.inputType('ContactInput', {
  fields: (t) => ({ jid: t.string(), ...contactFields(t) }),
});

const ContactPatch = builder.inputType('ContactPatch', {
  fields: (t) => contactFields(t),
});

builder.queryFields((t) => ({
  contacts: t.connection(
    {
      type: Contact,
      description: 'Contacts oldest first, filtered as GET /contacts filters them (tag, search).',
      args: { tag: t.arg.string(), search: t.arg.string() },
      resolve: async (_root, { tag, search, ...page }, ctx, info) => {
        const query = queryFromInfo({ context: ctx, info, typeName: 'Contact', path: ['edges', 'node'] });
        let total = 0;
        const connection = await resolveOffsetConnection({ args: page, defaultSize: DEFAULT_LIMIT, maxSize: MAX_LIMIT }, async (window) => {
          const found = await contactsWindow(ctx, withoutNulls({ tag, search }), window, query);
          total = found.total;
          return found.items;
        });
        return { ...connection, totalCount: total };
      },
    },
    { fields: (c) => ({ totalCount: c.int({ resolve: (connection) => connection.totalCount }) }) },
  ),
  contact: t.prismaField({
    type: 'Contact',
    args: { jid: t.arg.string({ required: true }) },
    resolve: (query, _root, args, ctx) => getContact(ctx, args.jid, query),
  }),
}));

builder.mutationFields((t) => ({
  upsertContact: t.prismaField({
    type: 'Contact',
    args: { input: t.arg({ type: ContactInput, required: true }) },
    resolve: async (query, _root, args, ctx) => getContact(ctx, (await upsertContact(ctx, withoutNulls(args.input))).contact.jid, query),
  }),
  importContacts: t.field({
    type: BulkImportResultRef,
    args: { contacts: t.arg({ type: [ContactInput], required: true }) },
    resolve: (_root, args, ctx) => bulkImportContacts(ctx, { contacts: args.contacts.map(withoutNulls) }),
  }),
  updateContact: t.prismaField({
    type: 'Contact',
    args: { jid: t.arg.string({ required: true }), input: t.arg({ type: ContactPatch, required: true }) },
    resolve: async (query, _root, args, ctx) => getContact(ctx, (await updateContact(ctx, args.jid, withoutNulls(args.input))).jid, query),
  }),
  deleteContact: t.field({
    type: 'Boolean',
    args: { jid: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => (await deleteContact(ctx, args.jid)).ok,
  }),
}));
