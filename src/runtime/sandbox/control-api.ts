import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import type { SandboxControl } from './control.ts';
import { readQrImage } from './qr-image.ts';
import { sampleImage } from './sample-image.ts';

const phoneBody = z.object({ number: z.string().regex(/^\d{5,20}$/), name: z.string().optional() });
const scanBody = z
  .object({ qr: z.string().min(1).optional(), qrCode: z.string().startsWith('data:image/png;base64,').optional() })
  .refine((b) => b.qr || b.qrCode, { message: 'give qr (the QR text) or qrCode (the PNG data URL)' });
const codeBody = z.object({ code: z.string().regex(/^[A-Za-z0-9]{4}-?[A-Za-z0-9]{4}$/) });
const sendBody = z.object({ to: z.string().min(1), text: z.string().min(1) });
const reactBody = z.object({ to: z.string().min(1), id: z.string().min(1), emoji: z.string() });
const voteBody = z.object({ to: z.string().min(1), pollMessageId: z.string().min(1), options: z.array(z.string()) });
const editBody = z.object({ to: z.string().min(1), id: z.string().min(1), text: z.string().min(1) });
const revokeBody = z.object({ to: z.string().min(1), id: z.string().min(1) });
const mediaBody = z.object({
  to: z.string().min(1),
  type: z.enum(['image', 'video', 'audio', 'document']),
  /** the file's bytes, base64 */
  data: z.base64().min(1),
  mimetype: z.string().min(1),
  caption: z.string().optional(),
  fileName: z.string().optional(),
  ptt: z.boolean().optional(),
});
const historyBody = z.object({
  chats: z
    .array(
      z.object({
        with: z.string().min(1),
        name: z.string().optional(),
        messages: z.array(
          z.object({
            id: z.string().min(1).optional(),
            fromMe: z.boolean().optional(),
            text: z.string(),
            at: z.union([z.number().int().min(0), z.iso.datetime()]),
            author: z.string().optional(),
            reactions: z
              .array(
                z.object({ from: z.string().min(1), emoji: z.string().min(1), at: z.union([z.number().int().min(0), z.iso.datetime()]) }),
              )
              .optional(),
          }),
        ),
      }),
    )
    .default([]),
  chunkMessages: z.number().int().min(1).optional(),
});
const faultBody = z.object({ deviceId: z.number().int().optional(), code: z.number().int().optional() });
const traceBody = z.object({ enabled: z.boolean() });
const readBody = z
  .object({ ids: z.array(z.string().min(1)).min(1).optional(), chat: z.string().min(1).optional() })
  .refine((b) => b.ids || b.chat, { message: 'give ids (message ids) or chat (a number, JID or group id)' });
const readChatBody = z.object({ chat: z.string().min(1) });
const chatActionBody = z
  .object({
    chat: z.string().min(1),
    archive: z.boolean().optional(),
    pin: z.boolean().optional(),
    /** muted until this time (ms since the epoch); null unmutes */
    mute: z.number().int().min(0).nullable().optional(),
    markRead: z.boolean().optional(),
  })
  .refine((b) => [b.archive, b.pin, b.mute, b.markRead].filter((v) => v !== undefined).length === 1, {
    message: 'give exactly one of archive, pin, mute (ms since the epoch, or null) or markRead',
  });
const presenceBody = z.object({
  to: z.string().min(1),
  presence: z.enum(['available', 'unavailable', 'composing', 'recording', 'paused']),
});
const pictureBody = z.object({
  hidden: z.boolean().optional(),
  /** the image's bytes, base64 (a blank PNG when left out) */
  data: z.base64().min(1).optional(),
  mimetype: z.string().min(1).optional(),
});
const chatPostBody = z.object({ to: z.array(z.string().min(1)).min(1), text: z.string().min(1) });
const callBody = z.object({ to: z.string().min(1), video: z.boolean().default(false) });
const playBody = z.object({ ids: z.array(z.string().min(1)).min(1) });
const rateBody = z
  .object({ messages: z.number().int().min(0).optional(), usync: z.number().int().min(0).optional(), windowMs: z.number().int().min(1) })
  .refine((b) => b.messages !== undefined || b.usync !== undefined, { message: 'give messages, usync or both (how many per windowMs)' });
const restrictBody = z.object({ ms: z.number().int().min(1).optional() });
const banBody = z.object({
  temporary: z.boolean().optional(),
  ms: z.number().int().min(1).optional(),
  reason: z.union([z.literal(403), z.literal(406)]).optional(),
  code: z.number().int().optional(),
});

/** The sandbox's HTTP+JSON control API on loopback: what tests do in-process, for any other program. */
export const startControlApi = async (
  control: SandboxControl,
  info: () => Record<string, unknown>,
  options: { port: number; host: string },
): Promise<{ url: string; server: Server }> => {
  const app = express();
  // send-media carries whole files as base64
  app.use(express.json({ limit: '64mb' }));
  const number = (req: Request) => String(req.params.number);
  let sample: Buffer | undefined;
  // A file to send by URL without the internet (`npm run demo` lets media URLs point at this machine).
  app.get('/sample.png', (_req, res) => {
    sample ??= sampleImage();
    res.type('image/png').send(sample);
  });
  app.get('/info', (_req, res) => {
    res.json(info());
  });
  app.get('/phones', (_req, res) => {
    res.json(control.phones());
  });
  app.post('/phones', (req, res) => {
    const body = phoneBody.parse(req.body);
    res.status(201).json(control.addPhone(body.number, body.name));
  });
  app.get('/phones/:number', (req, res) => {
    res.json(control.phone(number(req)));
  });
  app.post('/phones/:number/scan', async (req, res) => {
    const body = scanBody.parse(req.body);
    res.json(await control.scanQr(number(req), body.qr ?? readQrImage(body.qrCode ?? '')));
  });
  app.post('/phones/:number/pairing-code', async (req, res) => {
    res.json(await control.enterPairingCode(number(req), codeBody.parse(req.body).code));
  });
  app.post('/phones/:number/send', async (req, res) => {
    const body = sendBody.parse(req.body);
    res.json(await control.sendText(number(req), body.to, body.text));
  });
  app.post('/phones/:number/status', async (req, res) => {
    const body = chatPostBody.parse(req.body);
    res.json(await control.postStatus(number(req), body.to, body.text));
  });
  app.post('/phones/:number/broadcast', async (req, res) => {
    const body = chatPostBody
      .extend({
        listId: z
          .string()
          .regex(/^\d{1,20}$/)
          .optional(),
      })
      .parse(req.body);
    res.json(await control.sendBroadcast(number(req), body.to, body.text, body.listId));
  });
  app.post('/channels/:jid/post', (req, res) => {
    const body = chatPostBody.parse(req.body);
    res.json(control.postToChannel(String(req.params.jid), body.to, body.text));
  });
  app.post('/phones/:number/react', async (req, res) => {
    const body = reactBody.parse(req.body);
    res.json(await control.react(number(req), body.to, body.id, body.emoji));
  });
  app.post('/phones/:number/vote', async (req, res) => {
    const body = voteBody.parse(req.body);
    res.json(await control.vote(number(req), body.to, body.pollMessageId, body.options));
  });
  app.post('/phones/:number/edit', async (req, res) => {
    const body = editBody.parse(req.body);
    res.json(await control.edit(number(req), body.to, body.id, body.text));
  });
  app.post('/phones/:number/revoke', async (req, res) => {
    const body = revokeBody.parse(req.body);
    res.json(await control.revoke(number(req), body.to, body.id));
  });
  app.post('/phones/:number/send-media', async (req, res) => {
    const { to, data, ...media } = mediaBody.parse(req.body);
    res.json(await control.sendMedia(number(req), to, { ...media, data: Buffer.from(data, 'base64') }));
  });
  app.post('/phones/:number/hide-number', (req, res) => {
    res.json(control.hideNumber(number(req), z.object({ hide: z.boolean().default(true) }).parse(req.body ?? {}).hide));
  });
  app.post('/phones/:number/require-token', (req, res) => {
    res.json(control.requireToken(number(req), z.object({ require: z.boolean().default(true) }).parse(req.body ?? {}).require));
  });
  app.post('/phones/:number/history', (req, res) => {
    const { chunkMessages, ...input } = historyBody.parse(req.body ?? {});
    res.json(control.giveHistory(number(req), input, chunkMessages));
  });
  app.get('/phones/:number/history', (req, res) => {
    res.json({ sent: control.historySent(number(req)) });
  });
  app.get('/phones/:number/inbox', (req, res) => {
    res.json(control.inbox(number(req)).map(({ raw: _raw, receiptAs: _as, ...entry }) => entry));
  });
  app.get('/phones/:number/sent/:id', (req, res) => {
    const found = control.delivery(number(req), req.params.id);
    if (found) res.json(found);
    else res.status(404).json({ ok: false, error: 'this phone sent no message with that id (or it was forgotten)' });
  });
  app.post('/phones/:number/read', (req, res) => {
    res.json(control.read(number(req), readBody.parse(req.body ?? {})));
  });
  app.post('/phones/:number/read-chat', (req, res) => {
    res.json(control.readChat(number(req), readChatBody.parse(req.body ?? {}).chat));
  });
  app.post('/phones/:number/chat-action', async (req, res) => {
    const { chat, archive, pin, mute, markRead } = chatActionBody.parse(req.body ?? {});
    const action =
      archive !== undefined ? { archive } : pin !== undefined ? { pin } : mute !== undefined ? { mute } : { markRead: markRead ?? true };
    res.json(await control.chatAction(number(req), chat, action));
  });
  app.post('/phones/:number/play', (req, res) => {
    res.json(control.play(number(req), playBody.parse(req.body ?? {}).ids));
  });
  app.post('/phones/:number/drop', (req, res) => {
    res.json({ dropped: control.dropDevice(number(req), faultBody.parse(req.body ?? {}).deviceId) });
  });
  app.post('/phones/:number/logout', (req, res) => {
    res.json({ loggedOut: control.logout(number(req), faultBody.parse(req.body ?? {}).deviceId) });
  });
  app.post('/phones/:number/refuse-buttons', (req, res) => {
    res.json({ devices: control.refuseButtons(number(req), z.object({ refuse: z.boolean().default(true) }).parse(req.body ?? {}).refuse) });
  });
  app.post('/phones/:number/lose-sessions', (req, res) => {
    control.loseSessions(number(req));
    res.json({ ok: true });
  });
  app.post('/phones/:number/fail-decryption', (req, res) => {
    control.failDecryption(number(req), z.object({ fail: z.boolean().default(true) }).parse(req.body ?? {}).fail);
    res.json({ ok: true });
  });
  app.post('/phones/:number/undecryptable', (req, res) => {
    control.undecryptable(number(req), z.object({ count: z.number().int().min(0).default(1) }).parse(req.body ?? {}).count);
    res.json({ ok: true });
  });
  app.post('/phones/:number/freeze', (req, res) => {
    res.json({ frozen: control.freeze(number(req), faultBody.parse(req.body ?? {}).deviceId) });
  });
  app.post('/phones/:number/stream-error', (req, res) => {
    const body = faultBody.parse(req.body ?? {});
    res.json({ sent: control.streamError(number(req), body.code ?? 515, body.deviceId) });
  });
  app.post('/phones/:number/rate', (req, res) => {
    res.json(control.rateLimit(number(req), rateBody.parse(req.body ?? {})));
  });
  app.delete('/phones/:number/rate', (req, res) => {
    res.json(control.rateLimit(number(req), undefined));
  });
  app.post('/phones/:number/restrict', (req, res) => {
    res.json(control.restrict(number(req), restrictBody.parse(req.body ?? {}).ms));
  });
  app.delete('/phones/:number/restrict', (req, res) => {
    res.json(control.liftRestriction(number(req)));
  });
  app.post('/phones/:number/ban', (req, res) => {
    res.json(control.ban(number(req), banBody.parse(req.body ?? {})));
  });
  app.delete('/phones/:number/ban', (req, res) => {
    res.json(control.unban(number(req)));
  });
  app.get('/groups', (_req, res) => {
    res.json(control.groups());
  });
  app.get('/channels/:jid', (req, res) => {
    res.json(control.channel(String(req.params.jid)));
  });
  app.post('/phones/:number/receipt-lag', (req, res) => {
    const body = z.object({ ms: z.number().int().min(0).max(600_000) }).parse(req.body ?? {});
    control.setReceiptLag(number(req), body.ms);
    res.json({ ms: body.ms });
  });
  app.post('/phones/:number/acks', (req, res) => {
    const body = z.object({ delayMs: z.number().int().min(0).optional(), withhold: z.boolean().optional() }).parse(req.body ?? {});
    res.json({ devices: control.setAcks(number(req), body) });
  });
  app.post('/phones/:number/app-state-hold', (req, res) => {
    const body = z.object({ hold: z.boolean() }).parse(req.body ?? {});
    control.holdAppState(number(req), body.hold);
    res.json({ hold: body.hold });
  });
  app.get('/decrypt-failures', (_req, res) => {
    res.json(control.decryptFailures());
  });
  app.get('/phones/:number/sent/:id/reads', (req, res) => {
    res.json(control.readsOf(number(req), req.params.id));
  });
  app.post('/phones/:number/presence', (req, res) => {
    const body = presenceBody.parse(req.body);
    res.json(control.sendPresence(number(req), body.to, body.presence));
  });
  app.get('/phones/:number/presence', (req, res) => {
    res.json({ presence: control.accountPresence(number(req)) });
  });
  app.get('/phones/:number/typing', (req, res) => {
    res.json({ typing: control.typingSeen(number(req)) });
  });
  app.post('/phones/:number/call', (req, res) => {
    const body = callBody.parse(req.body);
    res.json(control.placeCall(number(req), body.to, body.video));
  });
  app.get('/calls/:callId', (req, res) => {
    const found = control.call(req.params.callId);
    if (found) res.json(found);
    else res.status(404).json({ ok: false, error: 'no call with that id (or it was forgotten)' });
  });
  const picture = (owner: string, body: unknown) => {
    const { data, ...options } = pictureBody.parse(body ?? {});
    return control.setPicture(owner, { ...options, ...(data ? { data: Buffer.from(data, 'base64') } : {}) });
  };
  app.post('/phones/:number/picture', (req, res) => {
    res.json(picture(number(req), req.body));
  });
  app.delete('/phones/:number/picture', (req, res) => {
    res.json({ removed: control.removePicture(number(req)) });
  });
  app.post('/groups/:jid/picture', (req, res) => {
    res.json(picture(String(req.params.jid), req.body));
  });
  app.delete('/groups/:jid/picture', (req, res) => {
    res.json({ removed: control.removePicture(String(req.params.jid)) });
  });
  app.get('/trace', (_req, res) => {
    res.json(control.trace());
  });
  app.post('/trace', (req, res) => {
    control.setTrace(traceBody.parse(req.body).enabled);
    res.json({ ok: true });
  });
  app.use((_req, res) => {
    res.status(404).json({ ok: false, error: 'no such control route' });
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = err instanceof z.ZodError ? 400 : 409;
    res
      .status(status)
      .json({ ok: false, error: err instanceof z.ZodError ? err.issues : err instanceof Error ? err.message : String(err) });
  });
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(options.port, options.host, resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://${options.host}:${port}`, server };
};
