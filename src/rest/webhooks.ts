import { Router } from 'express';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  replayWebhook,
  rotateWebhookSecret,
  sendTestWebhook,
  updateWebhook,
} from '../resolvers/webhooks.ts';
import { ctxOf } from './context.ts';

export const webhooksRouter = (): Router =>
  Router()
    .get('/webhooks', async (_req, res) => {
      res.json(await listWebhooks(ctxOf(res)));
    })
    .post('/webhooks', async (req, res) => {
      res.status(201).json(await createWebhook(ctxOf(res), req.body));
    })
    .get('/webhooks/:webhookId', async (req, res) => {
      res.json(await getWebhook(ctxOf(res), req.params.webhookId));
    })
    .patch('/webhooks/:webhookId', async (req, res) => {
      res.json(await updateWebhook(ctxOf(res), req.params.webhookId, req.body));
    })
    .delete('/webhooks/:webhookId', async (req, res) => {
      res.json(await deleteWebhook(ctxOf(res), req.params.webhookId));
    })
    .post('/webhooks/:webhookId/rotate-secret', async (req, res) => {
      res.json(await rotateWebhookSecret(ctxOf(res), req.params.webhookId));
    })
    .get('/webhooks/:webhookId/deliveries', async (req, res) => {
      res.json(await listWebhookDeliveries(ctxOf(res), req.params.webhookId, req.query));
    })
    .post('/webhooks/:webhookId/replay', async (req, res) => {
      res.json(await replayWebhook(ctxOf(res), req.params.webhookId, req.body));
    })
    .post('/webhooks/:webhookId/test', async (req, res) => {
      res.json(await sendTestWebhook(ctxOf(res), req.params.webhookId));
    });
