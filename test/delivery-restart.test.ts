import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma } from '../src/runtime/db/client.ts';
import type { Db } from '../src/runtime/db/client.ts';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { startSandbox } from '../src/runtime/sandbox/sandbox.ts';
import { dbKinds, http } from './helpers/app.ts';
import type { ServiceProcess } from './helpers/process.ts';
import { spawnService } from './helpers/process.ts';
import { linkThroughQr, waitUntil } from './helpers/sandbox.ts';

const KEY = `wak_${randomUUID()}`;
const ME = '15557770001';
const TO = {
  text: '15557770011',
  image: '15557770012',
  document: '15557770013',
  buttons: '15557770014',
  contact: '15557770015',
  location: '15557770016',
  status: '15557770017',
  poll: '15557770018',
  retried: '15557770019',
  written: '15557770021',
  later: '15557770020',
};
const DAY_MS = 24 * 3600 * 1000;
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe.each(dbKinds)('what a SIGKILL leaves in flight (%s)', (kind) => {
  let sandbox: Sandbox;
  let database: TestDatabase;
  let db: Db;
  let files: Server;
  let filesUrl = '';
  let service: ServiceProcess | undefined;
  let sessionId = '';
  const photo = randomBytes(4096);
  const report = randomBytes(3000);
  // A file whose server does not answer until the test lets it: a request that is cut off mid-way.
  const held: ServerResponse[] = [];
  let holdSlow = true;

  const env = () => ({
    DATABASE_URL: database.url,
    WA_SANDBOX_URL: sandbox.controlUrl,
    BOOTSTRAP_EMAIL: 'ops@example.com',
    BOOTSTRAP_API_KEY: KEY,
    MEDIA_ALLOW_PRIVATE: 'true',
  });
  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    http(service?.baseUrl ?? '', method, path, { key: KEY, body, headers });
  const restart = async (signal: NodeJS.Signals) => {
    await service?.stop(signal);
    service = await spawnService(env());
    await waitUntil(
      () => call('GET', `/v1/sessions/${sessionId}/status`),
      (r) => r.body.status === 'CONNECTED',
      60_000,
    );
  };
  const inbox = (number: string) => sandbox.control.inbox(number);

  beforeAll(async () => {
    sandbox = await startSandbox();
    database = await createTestDatabase(kind);
    db = await createPrisma(database.url);
    for (const n of [ME, ...Object.values(TO)]) sandbox.control.addPhone(n);
    files = createServer((req, res) => {
      if (req.url === '/photo.png') res.writeHead(200, { 'content-type': 'image/png' }).end(photo);
      else if (req.url === '/report.pdf') res.writeHead(200, { 'content-type': 'application/pdf' }).end(report);
      else if (req.url === '/slow.png' && holdSlow) held.push(res);
      else if (req.url === '/slow.png') res.writeHead(200, { 'content-type': 'image/png' }).end(photo);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;

    service = await spawnService(env());
    sessionId = await linkThroughQr(service.baseUrl, KEY, sandbox, ME, 'resend', 60_000);
  }, 180_000);
  afterAll(async () => {
    await service?.stop('SIGKILL');
    for (const res of held) res.destroy();
    await new Promise((resolve) => files?.close(resolve));
    await db?.$disconnect();
    await sandbox?.close();
    await database?.drop();
  });

  it('sends every kind of message that was in flight once, exactly as it was asked for', async () => {
    const base = `/v1/sessions/${sessionId}`;
    // The link goes silent: every send below writes its PENDING record, then waits on the network.
    expect(sandbox.control.freeze(ME)).toBe(1);
    const sends = [
      call('POST', `${base}/send`, { to: TO.text, message: 'plain text survives' }),
      call('POST', `${base}/send-media`, { to: TO.image, mediaType: 'image', url: `${filesUrl}/photo.png`, caption: 'the photo' }),
      call('POST', `${base}/messages/rich`, {
        to: TO.document,
        documentUrl: `${filesUrl}/report.pdf`,
        fileName: 'report-2026.pdf',
        mimetype: 'application/pdf',
      }),
      call('POST', `${base}/send-interactive`, {
        chatId: TO.buttons,
        header: 'Order 42',
        body: 'Confirm your order?',
        footer: 'Shop',
        buttons: [
          { type: 'reply', text: 'Yes', id: 'yes' },
          { type: 'url', text: 'Track', url: 'https://shop.example.com/42' },
        ],
      }),
      call('POST', `${base}/messages/rich`, { to: TO.contact, contactName: 'Ada Lovelace', contactPhone: '15557770099' }),
      call('POST', `${base}/messages/rich`, {
        to: TO.location,
        latitude: 10.181,
        longitude: 20,
        locationName: 'Depot',
        locationAddress: '1 Quay Street',
      }),
      call('POST', `${base}/status/send`, {
        type: 'text',
        text: 'status survives',
        backgroundColor: '#112233',
        statusJidList: [TO.status],
      }),
      call('POST', `${base}/messages/poll`, { to: TO.poll, name: 'Survives?', options: ['Yes', 'No'], selectableCount: 0 }),
    ].map((p) => p.catch(() => null));
    await waitUntil(
      () => db.outgoingMessage.count({ where: { sessionId, status: 'PENDING' } }),
      (n) => n === sends.length,
      30_000,
    );

    await restart('SIGKILL');
    await Promise.all(sends);

    const arrived = (number: string, chat?: string) =>
      waitUntil(
        async () => inbox(number).filter((e) => (chat ? e.chat === chat : e.chat.endsWith('@s.whatsapp.net'))),
        (entries) => entries.length > 0 && entries.every((e) => e.kind === 'text' || e.sha256 || !['image', 'document'].includes(e.kind)),
        60_000,
      );
    const text = await arrived(TO.text);
    expect(text.map((e) => [e.kind, e.content])).toEqual([['text', 'plain text survives']]);
    const image = await arrived(TO.image);
    expect(image.map((e) => [e.kind, e.caption, e.mimetype, e.sha256])).toEqual([['image', 'the photo', 'image/png', sha256(photo)]]);
    const document = await arrived(TO.document);
    expect(document.map((e) => [e.kind, e.fileName, e.mimetype, e.sha256])).toEqual([
      ['document', 'report-2026.pdf', 'application/pdf', sha256(report)],
    ]);
    const buttons = await arrived(TO.buttons);
    expect(buttons.map((e) => [e.kind, e.content])).toEqual([['buttons', 'Confirm your order? [Yes] [Track]']]);
    expect(JSON.stringify(buttons[0]?.raw)).toContain('Order 42');
    const contact = await arrived(TO.contact);
    expect(contact.map((e) => [e.kind, e.content])).toEqual([['contact', 'Ada Lovelace']]);
    expect(JSON.stringify(contact[0]?.raw)).toContain('15557770099');
    const location = await arrived(TO.location);
    expect(location.map((e) => [e.kind, e.content])).toEqual([['location', '10.181,20 Depot 1 Quay Street']]);
    const poll = await arrived(TO.poll);
    expect(poll.map((e) => [e.kind, e.poll])).toEqual([['poll', { name: 'Survives?', options: ['Yes', 'No'], selectableCount: 0 }]]);
    // The secret drawn before the crash is the one the resend carried: votes cast on either copy decrypt.
    const pollRecord = await db.outgoingMessage.findFirstOrThrow({ where: { kind: 'poll', sessionId } });
    const secret = ((poll[0]?.raw ?? {}) as { messageContextInfo?: { messageSecret?: Uint8Array } }).messageContextInfo?.messageSecret;
    expect(Buffer.from(secret ?? []).toString('base64')).toBe(JSON.parse(pollRecord.payload).messageSecret);
    const status = await arrived(TO.status, 'status@broadcast');
    expect(status.map((e) => [e.kind, e.content])).toEqual([['text', 'status survives']]);

    await waitUntil(
      () => db.outgoingMessage.count({ where: { sessionId, status: 'PENDING' } }),
      (n) => n === 0,
      30_000,
    );
    const records = await db.outgoingMessage.findMany({ where: { sessionId } });
    expect(records.map((r) => r.status)).toEqual(records.map(() => 'SENT'));
    for (const entries of [text, image, document, buttons, contact, location, poll, status]) {
      expect(entries.map((e) => e.duplicates)).toEqual([0]);
      // The network id chosen before the crash is the one the phone got.
      expect(records.map((r) => r.waMessageId)).toContain(entries[0]?.id);
    }
  }, 300_000);

  it('frees an Idempotency-Key whose request was cut off, so the retry sends, once', async () => {
    const base = `/v1/sessions/${sessionId}`;
    // Cut off before it wrote anything: it waits for its media file.
    const media = { to: TO.retried, mediaType: 'image', url: `${filesUrl}/slow.png`, caption: 'retried once' };
    const mediaKey = { 'Idempotency-Key': `cut-off-media-${kind}` };
    const first = call('POST', `${base}/send-media`, media, mediaKey).catch(() => null);
    await waitUntil(
      async () => held.length,
      (n) => n === 1,
      30_000,
    );
    // Cut off after its record was written: the link has gone silent.
    const text = { to: TO.written, message: 'written before the crash' };
    const textKey = { 'Idempotency-Key': `cut-off-text-${kind}` };
    expect(sandbox.control.freeze(ME)).toBe(1);
    const second = call('POST', `${base}/send`, text, textKey).catch(() => null);
    await waitUntil(
      () => db.outgoingMessage.count({ where: { toNumber: `${TO.written}@s.whatsapp.net`, status: 'PENDING' } }),
      (n) => n === 1,
      30_000,
    );
    expect(await db.idempotentRequest.count({ where: { status: 0 } })).toBe(2);

    await restart('SIGKILL');
    await Promise.all([first, second]);
    for (const res of held.splice(0)) res.destroy();
    holdSlow = false;

    const retried = await call('POST', `${base}/send-media`, media, mediaKey);
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    const again = await call('POST', `${base}/send-media`, media, mediaKey);
    expect([again.status, again.body, again.headers.get('idempotent-replayed')]).toEqual([200, retried.body, 'true']);
    const entries = await waitUntil(
      async () => inbox(TO.retried),
      (e) => e.length > 0 && Boolean(e[0]?.sha256),
      30_000,
    );
    expect(entries.map((e) => [e.caption, e.sha256, e.duplicates])).toEqual([['retried once', sha256(photo), 0]]);
    expect(await db.outgoingMessage.count({ where: { toNumber: `${TO.retried}@s.whatsapp.net` } })).toBe(1);

    // The retry answers with the record the first attempt wrote, which the start sent again itself.
    const record = await db.outgoingMessage.findFirstOrThrow({ where: { toNumber: `${TO.written}@s.whatsapp.net` } });
    const textRetry = await call('POST', `${base}/send`, text, textKey);
    expect([textRetry.status, textRetry.body]).toEqual([200, { ok: true, id: record.id }]);
    const written = await waitUntil(
      async () => inbox(TO.written),
      (e) => e.length > 0,
      30_000,
    );
    await waitUntil(
      () => db.outgoingMessage.count({ where: { toNumber: `${TO.written}@s.whatsapp.net`, status: 'SENT' } }),
      (n) => n === 1,
      30_000,
    );
    expect(written.map((e) => [e.content, e.duplicates])).toEqual([['written before the crash', 0]]);
    expect(await db.outgoingMessage.count({ where: { toNumber: `${TO.written}@s.whatsapp.net` } })).toBe(1);
  }, 300_000);

  it('keeps a 30-day schedule PENDING across a restart, and a 30-day recurring interval does not fire', async () => {
    const base = `/v1/sessions/${sessionId}`;
    const scheduled = await call('POST', `${base}/messages/schedule`, { to: TO.later, message: 'in thirty days', delayMs: 30 * DAY_MS });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body.scheduledInMs).toBe(30 * DAY_MS);
    const status = await call('POST', `${base}/status/schedule`, {
      payload: { type: 'text', text: 'status in thirty days', statusJidList: [TO.later] },
      delayMs: 30 * DAY_MS,
    });
    expect(status.status).toBe(200);
    const recurring = await call('POST', `${base}/messages/recurring`, {
      to: TO.later,
      message: 'every thirty days',
      everyMs: 30 * DAY_MS,
    });
    expect(recurring.status).toBe(200);
    const recurringStatus = await call('POST', `${base}/status/recurring`, {
      payload: { type: 'text', text: 'status every thirty days', statusJidList: [TO.later] },
      everyMs: 30 * DAY_MS,
    });
    expect(recurringStatus.status).toBe(200);
    // Past the year the API accepts: refused, and nothing stored.
    const year = 365 * DAY_MS;
    const far = [
      await call('POST', `${base}/messages/schedule`, { to: TO.later, message: 'too far', delayMs: year + 1 }),
      await call('POST', `${base}/messages/schedule`, {
        to: TO.later,
        message: 'too far',
        sendAt: new Date(Date.now() + year + DAY_MS).toISOString(),
      }),
      await call('POST', `${base}/messages/recurring`, { to: TO.later, message: 'too far', everyMs: year + 1 }),
      await call('POST', `${base}/status/schedule`, {
        payload: { type: 'text', text: 'too far', statusJidList: [TO.later] },
        delayMs: year + 1,
      }),
      await call('POST', `${base}/status/recurring`, {
        payload: { type: 'text', text: 'too far', statusJidList: [TO.later] },
        everyMs: year + 1,
      }),
    ];
    expect(far.map((r) => [r.status, r.body.error.code, r.body.error.details[0].path])).toEqual([
      [400, 'VALIDATION_FAILED', 'delayMs'],
      [400, 'VALIDATION_FAILED', 'sendAt'],
      [400, 'VALIDATION_FAILED', 'everyMs'],
      [400, 'VALIDATION_FAILED', 'delayMs'],
      [400, 'VALIDATION_FAILED', 'everyMs'],
    ]);

    // Node's own timers fire a delay past 2^31-1 ms at once; a one-second wait would have shown them.
    await new Promise((r) => setTimeout(r, 1500));
    await restart('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    expect(inbox(TO.later)).toEqual([]);
    const pending = await db.outgoingMessage.findMany({ where: { sessionId, status: 'PENDING' }, orderBy: { content: 'asc' } });
    expect(pending.map((r) => [r.content, r.sendAt && r.sendAt.getTime() - r.createdAt.getTime() >= 30 * DAY_MS - 5_000])).toEqual([
      ['in thirty days', true],
      ['status in thirty days', true],
    ]);
  }, 300_000);
});
