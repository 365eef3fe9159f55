import { Router } from 'express';
import {
  bulkImportContacts,
  contactView,
  deleteContact,
  getContact,
  listContacts,
  updateContact,
  upsertContact,
} from '../resolvers/contacts.ts';
import { ctxOf } from './context.ts';

export const contactsRouter = (): Router =>
  Router()
    .get('/contacts', async (req, res) => {
      const page = await listContacts(ctxOf(res), req.query);
      res.json({ ...page, items: page.items.map(contactView) });
    })
    .post('/contacts', async (req, res) => {
      const { contact, created } = await upsertContact(ctxOf(res), req.body);
      res.status(created ? 201 : 200).json(contactView(contact));
    })
    .post('/contacts/bulk', async (req, res) => {
      res.json(await bulkImportContacts(ctxOf(res), req.body));
    })
    .get('/contacts/:jid', async (req, res) => {
      res.json(contactView(await getContact(ctxOf(res), req.params.jid)));
    })
    .patch('/contacts/:jid', async (req, res) => {
      res.json(contactView(await updateContact(ctxOf(res), req.params.jid, req.body)));
    })
    .delete('/contacts/:jid', async (req, res) => {
      res.json(await deleteContact(ctxOf(res), req.params.jid));
    });
