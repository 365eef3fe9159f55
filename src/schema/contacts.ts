import type { BulkImportResult, ContactPage } from '../resolvers/contacts.ts';
import {
  bulkImportContacts,
  deleteContact,
  getContact,
  listContacts,
  parseTags,
  parseVariables,
  updateContact,
  upsertContact,
} from '../resolvers/contacts.ts';
import type { InputFields } from './builder.ts';
import { builder, withoutNulls } from './builder.ts';

export const Contact = builder.prismaObject('Contact', {
  fields: (t) => ({
    id: t.exposeID('id'),
    jid: t.exposeString('jid'),
    phone: t.exposeString('phone'),
    name: t.exposeString('name'),
    email: t.exposeString('email'),
    tags: t.stringList({ select: { tags: true }, resolve: (row) => parseTags(row.tags) }),
    variables: t.field({ type: 'JSONObject', select: { variables: true }, resolve: (row) => parseVariables(row.variables) }),
    isBlocked: t.exposeBoolean('isBlocked'),
  }),
});

const ContactPageRef = builder.objectRef<ContactPage>('ContactPage').implement({
  fields: (t) => ({
    total: t.exposeInt('total'),
    page: t.exposeInt('page'),
    limit: t.exposeInt('limit'),
    items: t.field({ type: [Contact], resolve: (page) => page.items }),
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
  contacts: t.field({
    type: ContactPageRef,
    args: { page: t.arg.int(), limit: t.arg.int(), tag: t.arg.string(), search: t.arg.string() },
    resolve: (_root, args, ctx) => listContacts(ctx, withoutNulls(args)),
  }),
  contact: t.prismaField({
    type: 'Contact',
    args: { jid: t.arg.string({ required: true }) },
    resolve: (query, _root, args, ctx) => getContact(ctx, args.jid, query),
  }),
}));

builder.mutationFields((t) => ({
  upsertContact: t.field({
    type: Contact,
    args: { input: t.arg({ type: ContactInput, required: true }) },
    resolve: async (_root, args, ctx) => (await upsertContact(ctx, withoutNulls(args.input))).contact,
  }),
  importContacts: t.field({
    type: BulkImportResultRef,
    args: { contacts: t.arg({ type: [ContactInput], required: true }) },
    resolve: (_root, args, ctx) => bulkImportContacts(ctx, { contacts: args.contacts.map(withoutNulls) }),
  }),
  updateContact: t.field({
    type: Contact,
    args: { jid: t.arg.string({ required: true }), input: t.arg({ type: ContactPatch, required: true }) },
    resolve: (_root, args, ctx) => updateContact(ctx, args.jid, withoutNulls(args.input)),
  }),
  deleteContact: t.field({
    type: 'Boolean',
    args: { jid: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => (await deleteContact(ctx, args.jid)).ok,
  }),
}));
