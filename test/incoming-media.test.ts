import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import type { Settings } from '../src/runtime/settings.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { sandboxAddress, startSandbox } from '../src/runtime/sandbox/sandbox.ts';
import { downloadReceivedMedia } from '../src/runtime/network/baileys-network.ts';
import { mediaDispatcherFor } from '../src/runtime/network/baileys-target.ts';
import type { DepsOptions } from '../src/runtime/root/deps.ts';
import type { Json, TestApp } from './helpers/app.ts';
import { dbKinds, gql, http, startTestApp } from './helpers/app.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15557730001';
const KIM = '15557730002';
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const DAY_MS = 24 * 60 * 60 * 1000;

interface Sent {
  id: string;
  data: Buffer;
  mimetype: string;
  fileName: string | null;
  /** where the sandbox's media host keeps the encrypted file */
  hostUrl: string;
}

describe.each(dbKinds)('received files (%s): media objects, downloads, retention', (kind) => {
  let sandbox: Sandbox;
  let database: TestDatabase;
  let receiver: Receiver;
  let app: TestApp;
  let key: string;
  let sessionId: string;
  const sent: Record<'image' | 'document' | 'voice', Sent> = {} as Record<'image' | 'document' | 'voice', Sent>;

  /** The service on this test's database: a second call after close() is a restart on the same data. */
  const start = (overrides: Partial<Settings> = {}, options: Partial<DepsOptions> = {}) =>
    startTestApp(
      kind,
      { WEBHOOK_ALLOW_PRIVATE: true, WEBHOOK_POLL_MS: 100, ...overrides },
      { target: { sandbox: sandboxAddress(sandbox) }, sessionTuning: { backoffBaseMs: 100, backoffMaxMs: 1_000 }, ...options },
      { existing: database },
    );
  const restart = async (overrides: Partial<Settings> = {}, options: Partial<DepsOptions> = {}) => {
    await app.close();
    app = await start(overrides, options);
  };
  const mediaUrl = (id: string) => `/v1/sessions/${sessionId}/incoming/${id}/media`;
  const download = async (path: string, apiKey = key) => {
    const res = await fetch(`${app.baseUrl}${path}`, { headers: { 'x-api-key': apiKey } });
    const body = Buffer.from(await res.arrayBuffer());
    return { status: res.status, headers: res.headers, body, json: (): Json => JSON.parse(body.toString()) };
  };

  beforeAll(async () => {
    sandbox = await startSandbox();
    database = await createTestDatabase(kind);
    receiver = await startReceiver();
    app = await start();
    key = (await app.newAccount()).apiKey;
    sessionId = await linkSession({ app, sandbox, key }, ME);
    sandbox.control.addPhone(KIM, 'Kim');
    const hook = await http(app.baseUrl, 'POST', '/v1/webhooks', { key, body: { url: receiver.url, events: ['message.received'] } });
    expect(hook.status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await database?.drop();
    await receiver?.close();
    await sandbox?.close();
  });

  it('a phone sends an image, a named document and a voice note: the items carry media objects, and the bytes download intact', async () => {
    const files = {
      image: { data: randomBytes(70_000), mimetype: 'image/jpeg', fileName: null },
      document: { data: randomBytes(12_345), mimetype: 'application/pdf', fileName: 'contract 2026 – signed.pdf' },
      voice: { data: randomBytes(5_000), mimetype: 'audio/ogg; codecs=opus', fileName: null },
    } as const;
    const image = await sandbox.control.sendMedia(KIM, ME, { type: 'image', ...files.image, fileName: undefined, caption: 'the view' });
    sent.image = { id: image.id, hostUrl: image.url, ...files.image };
    const doc = await sandbox.control.sendMedia(KIM, ME, { type: 'document', ...files.document });
    sent.document = { id: doc.id, hostUrl: doc.url, ...files.document };
    const voice = await sandbox.control.sendMedia(KIM, ME, { type: 'audio', ...files.voice, fileName: undefined, ptt: true });
    sent.voice = { id: voice.id, hostUrl: voice.url, ...files.voice };

    // Read without consuming first (REST), then the same items through GraphQL.
    const page = await waitUntil(
      () => http(app.baseUrl, 'GET', `/v1/sessions/${sessionId}/incoming?waitMs=5000&consume=false`, { key }),
      (r) => r.body.count >= 3,
      30_000,
    );
    const common = {
      sessionId,
      chatId: `${KIM}@s.whatsapp.net`,
      chatLid: sandbox.control.phone(KIM).lid,
      from: `${KIM}@s.whatsapp.net`,
      fromLid: sandbox.control.phone(KIM).lid,
      fromMe: false,
      pushName: 'Kim',
      eventId: expect.any(Number),
      messageTimestamp: expect.any(Number),
      receivedAt: expect.stringMatching(/Z$/),
      waMessageId: expect.any(String),
    };
    const mediaOf = (s: Sent) => ({ mimetype: s.mimetype, size: s.data.length, fileName: s.fileName, url: mediaUrl(s.id) });
    expect(page.body.items).toEqual([
      { ...common, type: 'image', content: 'the view', media: mediaOf(sent.image) },
      { ...common, type: 'document', content: 'contract 2026 – signed.pdf', media: mediaOf(sent.document) },
      { ...common, type: 'audio', content: '[voice note]', media: mediaOf(sent.voice) },
    ]);

    const graph = await gql(
      app.baseUrl,
      key,
      'query ($s: ID!) { session(id: $s) { incoming { count items { type content media { mimetype size fileName url } } } } }',
      { s: sessionId },
    );
    expect(graph.errors).toBeUndefined();
    expect(graph.data.session.incoming.items).toEqual([
      { type: 'image', content: 'the view', media: mediaOf(sent.image) },
      { type: 'document', content: 'contract 2026 – signed.pdf', media: mediaOf(sent.document) },
      { type: 'audio', content: '[voice note]', media: mediaOf(sent.voice) },
    ]);

    for (const s of Object.values(sent)) {
      const res = await download(mediaUrl(s.id));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(s.mimetype);
      expect(res.headers.get('content-length')).toBe(String(s.data.length));
      expect(sha(res.body)).toBe(sha(s.data));
    }
    expect((await download(mediaUrl(sent.document.id))).headers.get('content-disposition')).toBe(
      `attachment; filename="contract 2026 ? signed.pdf"; filename*=UTF-8''contract%202026%20%E2%80%93%20signed.pdf`,
    );
    expect((await download(mediaUrl(sent.image.id))).headers.get('content-disposition')).toBe('inline');

    // The webhook's message.received payloads carry the same media objects.
    const hooks = await waitUntil(
      async () => receiver.received.filter((r) => r.payload.type === 'message.received'),
      (r) => r.length >= 3,
      30_000,
    );
    expect(hooks.map((h) => h.payload.data.media)).toEqual([mediaOf(sent.image), mediaOf(sent.document), mediaOf(sent.voice)]);
  }, 90_000);

  it("answers 404 for another account's session and for an unknown message, 401 without a key", async () => {
    const other = (await app.newAccount()).apiKey;
    const foreign = await download(mediaUrl(sent.image.id), other);
    expect(foreign.status).toBe(404);
    expect(foreign.json()).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'Session not found' } });
    const unknown = await download(mediaUrl('3EB0000000000000000000'));
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toEqual({
      ok: false,
      error: {
        code: 'NOT_FOUND',
        message:
          'No received media with this message id in this session (received files can be downloaded for 168 hours, then they expire)',
      },
    });
    const anonymous = await fetch(`${app.baseUrl}${mediaUrl(sent.image.id)}`);
    expect(anonymous.status).toBe(401);
  });

  it('a message handed over twice keeps its first record and the same media object', async () => {
    const again = await app.deps.incomingMedia.receive(sessionId, {
      chatId: `${KIM}@s.whatsapp.net`,
      chatLid: null,
      from: `${KIM}@s.whatsapp.net`,
      fromLid: null,
      fromMe: false,
      type: 'image',
      content: 'the view',
      pushName: 'Kim',
      messageTimestamp: 1,
      messageId: sent.image.id,
      media: {
        mediaType: 'image',
        mediaKey: 'AAAA',
        directPath: '/m/other',
        mimetype: 'image/jpeg',
        size: sent.image.data.length,
        fileName: null,
      },
    });
    expect(again.media?.url).toBe(mediaUrl(sent.image.id));
    const row = await app.db.incomingMedia.findUniqueOrThrow({ where: { sessionId_messageId: { sessionId, messageId: sent.image.id } } });
    expect(row.directPath).not.toBe('/m/other');
  });

  it('cuts the body short when the file does not match the SHA-256 its sender stated', async () => {
    const where = { sessionId_messageId: { sessionId, messageId: sent.document.id } };
    const { fileSha256 } = await app.db.incomingMedia.findUniqueOrThrow({ where });
    await app.db.incomingMedia.update({ where, data: { fileSha256: createHash('sha256').update('something else').digest('base64') } });
    try {
      const res = await fetch(`${app.baseUrl}${mediaUrl(sent.document.id)}`, { headers: { 'x-api-key': key } });
      expect(res.status).toBe(200);
      await expect(res.arrayBuffer()).rejects.toThrow();
    } finally {
      await app.db.incomingMedia.update({ where, data: { fileSha256 } });
    }
    expect(sha((await download(mediaUrl(sent.document.id))).body)).toBe(sha(sent.document.data));
  });

  it('a client that goes away mid-file cancels the fetch from the media host; the next download is whole', async () => {
    // Larger than what the sockets and streams between the media host and the client hold, so the host
    // is still sending when the client leaves, unless the service read ahead of its client.
    const data = randomBytes(24 * 1024 * 1024);
    const { id } = await sandbox.control.sendMedia(KIM, ME, { type: 'video', data, mimetype: 'video/mp4' });
    await waitUntil(
      () => app.db.incomingMedia.count({ where: { sessionId, messageId: id } }),
      (n) => n === 1,
      30_000,
    );
    // How each of the media host's answers ended: sent whole, or cut off by the fetching side.
    const ends: Array<'whole' | 'cut'> = [];
    const host = sandbox.network.media;
    const handle = host.handle.bind(host);
    host.handle = (req, res) => {
      if (req.method === 'GET') res.once('close', () => ends.push(res.writableFinished ? 'whole' : 'cut'));
      handle(req, res);
    };
    try {
      const aborter = new AbortController();
      const res = await fetch(`${app.baseUrl}${mediaUrl(id)}`, { headers: { 'x-api-key': key }, signal: aborter.signal });
      expect(res.status).toBe(200);
      const reader = res.body?.getReader();
      expect((await reader?.read())?.value?.length).toBeGreaterThan(0);
      aborter.abort();
      await reader?.cancel().catch(() => undefined);
      await waitUntil(
        async () => ends,
        (e) => e.length === 1,
        30_000,
      );
      expect(ends).toEqual(['cut']);

      const whole = await download(mediaUrl(id));
      expect(whole.status).toBe(200);
      expect(whole.body.length).toBe(data.length);
      expect(sha(whole.body)).toBe(sha(data));
    } finally {
      host.handle = handle;
    }
  }, 90_000);

  it('a media host that fails midway or before answering: the download is cut short or a 502, and every session keeps sending and receiving', async () => {
    const data = randomBytes(300_000);
    const { id, url } = await sandbox.control.sendMedia(KIM, ME, { type: 'video', data, mimetype: 'video/mp4' });
    await waitUntil(
      () => app.db.incomingMedia.count({ where: { sessionId, messageId: id } }),
      (n) => n === 1,
      30_000,
    );
    // Another account's session on the same service: one tenant's failed download must not touch it.
    const other = (await app.newAccount()).apiKey;
    const OTHER = '15557730003';
    const otherSession = await linkSession({ app, sandbox, key: other }, OTHER);
    // Every status change of both sessions while the downloads fail (a network worker that died would
    // drop both links, and they would re-link).
    const changes: string[] = [];
    const watches = [sessionId, otherSession].map((s) => app.deps.events.subscribe('session', s));
    for (const watch of watches) {
      void (async () => {
        for await (const row of watch) changes.push(`${row.id}: ${row.status}`);
      })();
    }
    try {
      const host = sandbox.network.media;
      // This file's downloads only: the other session, just linked, may still be fetching its history blobs.
      host.failDownloadsOf(url, 'cut');
      const cut = await fetch(`${app.baseUrl}${mediaUrl(id)}`, { headers: { 'x-api-key': key } });
      expect(cut.status).toBe(200);
      expect(cut.headers.get('content-length')).toBe(String(data.length));
      await expect(cut.arrayBuffer()).rejects.toThrow();

      host.failDownloadsOf(url, 'reset');
      const reset = await download(mediaUrl(id));
      expect(reset.status).toBe(502);
      expect(reset.json()).toEqual({
        ok: false,
        error: {
          code: 'NETWORK_ERROR',
          message: "The file could not be fetched from the network's media host: fetch failed: other side closed",
        },
      });

      const whole = await download(mediaUrl(id));
      expect(whole.status).toBe(200);
      expect(sha(whole.body)).toBe(sha(data));

      // Both sessions still send and receive on the links they had.
      for (const [apiKey, session, number] of [
        [key, sessionId, ME],
        [other, otherSession, OTHER],
      ] as const) {
        const text = `still here ${number}`;
        const send = await http(app.baseUrl, 'POST', `/v1/sessions/${session}/send`, { key: apiKey, body: { to: KIM, message: text } });
        expect(send.status).toBe(200);
        await waitUntil(
          async () => sandbox.control.inbox(KIM).filter((m) => m.content === text),
          (found) => found.length === 1,
        );
        await sandbox.control.sendText(KIM, number, `reply to ${number}`);
        await waitUntil(
          () => http(app.baseUrl, 'GET', `/v1/sessions/${session}/incoming?waitMs=5000&consume=false&limit=100`, { key: apiKey }),
          (r) => r.body.items.some((m: { content: string }) => m.content === `reply to ${number}`),
        );
      }
      expect(changes).toEqual([]);
    } finally {
      for (const watch of watches) await watch.return?.();
    }
  }, 90_000);

  it('a media host that drops the connection before the first chunk is read: the first read fails, nothing is uncaught', async () => {
    const data = randomBytes(100_000);
    const { id } = await sandbox.control.sendMedia(KIM, ME, { type: 'document', data, mimetype: 'application/pdf' });
    const media = await waitUntil(
      () => app.deps.incomingMedia.find(sessionId, id),
      (m) => m !== null,
      30_000,
    );
    const host = sandbox.network.media;
    const handle = host.handle.bind(host);
    let closed = false;
    host.handle = (req, res) => {
      res.once('close', () => (closed = true));
      handle(req, res);
    };
    try {
      host.failDownloads('cut');
      // What the network worker does, minus the main side's first read, which here comes only once the
      // host's connection is gone.
      const stream = await downloadReceivedMedia(
        media?.locator ?? { mediaType: 'document', mediaKey: '' },
        mediaDispatcherFor({ sandbox: sandboxAddress(sandbox) }),
      );
      await waitUntil(
        async () => closed,
        (c) => c,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      await expect(stream.getReader().read()).rejects.toThrow(/terminated/);
    } finally {
      host.handle = handle;
    }
  });

  it('downloads still work after a restart of the service (the record is in the database)', async () => {
    await restart();
    for (const s of Object.values(sent)) {
      const res = await download(mediaUrl(s.id));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(s.mimetype);
      expect(sha(res.body)).toBe(sha(s.data));
    }
  }, 60_000);

  it("answers 410 MEDIA_GONE when the network's media host no longer has the file", async () => {
    expect(sandbox.network.media.remove(sent.voice.hostUrl)).toBe(true);
    const res = await download(mediaUrl(sent.voice.id));
    expect(res.status).toBe(410);
    expect(res.json()).toEqual({
      ok: false,
      error: {
        code: 'MEDIA_GONE',
        message: "The network's media host no longer has this file (HTTP 404)",
      },
    });
  });

  it('past the retention window: 404 saying it expired, then the recurring purge deletes the records', async () => {
    // A clock eight days ahead: past the default window of 7 days.
    await restart({}, { now: () => new Date(Date.now() + 8 * DAY_MS) });
    const expired = await download(mediaUrl(sent.image.id));
    expect(expired.status).toBe(404);
    expect(expired.json()).toEqual({
      ok: false,
      error: { code: 'NOT_FOUND', message: 'This received media expired: files can be downloaded for 168 hours after they arrive' },
    });

    await restart({ INCOMING_MEDIA_RETENTION_MS: 1_000 });
    await waitUntil(
      () => app.db.incomingMedia.count({ where: { sessionId } }),
      (n) => n === 0,
      30_000,
    );
    const purged = await download(mediaUrl(sent.document.id));
    expect(purged.status).toBe(404);
    expect(purged.json().error.message).toBe(
      'No received media with this message id in this session (received files can be downloaded for 1 s, then they expire)',
    );
  }, 60_000);
});

describe.each([
  { mode: 'thread', me: '15557730021', them: '15557730022' },
  { mode: 'inline', me: '15557730011', them: '15557730012' },
  { mode: 'process', me: '15557730031', them: '15557730032' },
] as const)('received files with NETWORK_MODE=$mode', ({ mode, me, them }) => {
  it('streams the same bytes; a media host that fails midway cuts the download and leaves the link up', async () => {
    const ctx = await startWithSandbox('sqlite', { NETWORK_MODE: mode });
    try {
      const sessionId = await linkSession(ctx, me);
      ctx.sandbox.control.addPhone(them);
      const data = randomBytes(33_000);
      const { id } = await ctx.sandbox.control.sendMedia(them, me, { type: 'video', data, mimetype: 'video/mp4' });
      const page = await waitUntil(
        () => http(ctx.app.baseUrl, 'GET', `/v1/sessions/${sessionId}/incoming?waitMs=5000`, { key: ctx.key }),
        (r) => r.body.count >= 1,
        30_000,
      );
      const url = `/v1/sessions/${sessionId}/incoming/${id}/media`;
      expect(page.body.items[0]).toMatchObject({
        type: 'video',
        content: '[video]',
        media: { mimetype: 'video/mp4', size: 33_000, fileName: null, url },
      });
      const res = await fetch(`${ctx.app.baseUrl}${url}`, { headers: { 'x-api-key': ctx.key } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('video/mp4');
      expect(sha(Buffer.from(await res.arrayBuffer()))).toBe(sha(data));

      const before = await ctx.app.deps.sessions.networkStats();
      ctx.sandbox.network.media.failDownloads('cut');
      const cut = await fetch(`${ctx.app.baseUrl}${url}`, { headers: { 'x-api-key': ctx.key } });
      expect(cut.status).toBe(200);
      await expect(cut.arrayBuffer()).rejects.toThrow();
      // The same network process, and the link it had: the session sends at once.
      expect((await ctx.app.deps.sessions.networkStats())?.process?.pid).toBe(before?.process?.pid);
      const send = await http(ctx.app.baseUrl, 'POST', `/v1/sessions/${sessionId}/send`, {
        key: ctx.key,
        body: { to: them, message: 'after the cut' },
      });
      expect(send.status).toBe(200);
      await waitUntil(
        async () => ctx.sandbox.control.inbox(them).filter((m) => m.content === 'after the cut'),
        (found) => found.length === 1,
      );
    } finally {
      await ctx.app.close();
      await ctx.sandbox.close();
    }
  }, 60_000);
});
