import { z } from 'zod';
import {
  bulkImportContacts,
  bulkSchema,
  contactView,
  deleteContact,
  getContact,
  listContacts,
  listSchema,
  patchSchema,
  updateContact,
  upsertContact,
  upsertSchema,
} from '../resolvers/contacts.ts';
import { ok } from './answers.ts';
import { answer, route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Contacts';

const contact = z
  .object({
    id: z.string(),
    jid: z.string(),
    lid: z.string().nullable().describe("extension: the person's LID (not a phone number), once the network told it"),
    phone: z.string(),
    name: z.string(),
    email: z.string(),
    tags: z.array(z.string()),
    variables: z.record(z.string(), z.string()),
    isBlocked: z.boolean(),
  })
  .meta({ id: 'Contact' });
const contactPage = z.object({ total: z.number().int(), page: z.number().int(), limit: z.number().int(), items: z.array(contact) });
const contactImport = z.object({
  created: z.number().int(),
  updated: z.number().int(),
  skipped: z.number().int(),
  errors: z.array(z.object({ index: z.number().int(), jid: z.string().optional(), reason: z.string() })),
});

export const contactsRoutes: Route[] = [
  route({
    method: 'get',
    path: '/contacts',
    summary: 'List and search contacts',
    tag,
    query: listSchema,
    response: contactPage,
    handler: async ({ ctx, query }) => {
      const page = await listContacts(ctx, query);
      return { ...page, items: page.items.map(contactView) };
    },
  }),
  route({
    method: 'post',
    path: '/contacts',
    summary: 'Create or merge a contact (201 when created, 200 when updated)',
    tag,
    body: upsertSchema,
    response: contact,
    status: [201, 200],
    handler: async ({ ctx, body }) => {
      const { contact, created } = await upsertContact(ctx, body);
      return answer(created ? 201 : 200, contactView(contact));
    },
  }),
  route({
    method: 'post',
    path: '/contacts/bulk',
    summary: 'Import up to 500 contacts',
    tag,
    body: bulkSchema,
    response: contactImport,
    handler: ({ ctx, body }) => bulkImportContacts(ctx, body),
  }),
  route({
    method: 'get',
    path: '/contacts/:jid',
    summary: 'Get a contact',
    tag,
    response: contact,
    handler: async ({ ctx, params }) => contactView(await getContact(ctx, params.jid)),
  }),
  route({
    method: 'patch',
    path: '/contacts/:jid',
    summary: 'Update a contact',
    tag,
    body: patchSchema,
    response: contact,
    handler: async ({ ctx, params, body }) => contactView(await updateContact(ctx, params.jid, body)),
  }),
  route({
    method: 'delete',
    path: '/contacts/:jid',
    summary: 'Delete a contact',
    tag,
    response: ok,
    handler: ({ ctx, params }) => deleteContact(ctx, params.jid),
  }),
];
