import { createHash, randomBytes } from 'node:crypto';
import { http as mswHttp, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from './helpers/app.ts';
import { http, startTestApp } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15551212001';
const TO = '15551212002';
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const photo = randomBytes(4096);
const voice = randomBytes(2048);
const pdf = Buffer.from('%PDF-1.4 contract');

const files = setupServer(
  mswHttp.get('https://files.example.com/photo.jpg', () =>
    HttpResponse.arrayBuffer(photo.buffer.slice(photo.byteOffset, photo.byteOffset + photo.length), {
      headers: { 'content-type': 'image/jpeg' },
    }),
  ),
  mswHttp.get('https://files.example.com/voice.ogg', () =>
    HttpResponse.arrayBuffer(voice.buffer.slice(voice.byteOffset, voice.byteOffset + voice.length), {
      headers: { 'content-type': 'audio/ogg' },
    }),
  ),
  mswHttp.get('https://files.example.com/contract.pdf', () =>
    HttpResponse.arrayBuffer(pdf.buffer.slice(pdf.byteOffset, pdf.byteOffset + pdf.length), {
      headers: { 'content-type': 'application/pdf' },
    }),
  ),
  mswHttp.get('https://files.example.com/gone.png', () => new HttpResponse(null, { status: 404 })),
);

describe('media sends end to end (files served by msw)', () => {
  let ctx: Linked;
  let sessionId: string;
  const call = (path: string, body: unknown) => http(ctx.app.baseUrl, 'POST', path, { key: ctx.key, body });
  const inbox = () => ctx.sandbox.control.inbox(TO);

  beforeAll(async () => {
    files.listen({ onUnhandledRequest: 'bypass' });
    ctx = await startWithSandbox();
    sessionId = await linkSession(ctx, ME);
    ctx.sandbox.control.addPhone(TO);
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
    files.close();
  });

  it('sends an image with its caption; the phone decrypts the same bytes', async () => {
    const res = await call(`/v1/sessions/${sessionId}/send-media`, {
      to: TO,
      mediaType: 'image',
      url: 'https://files.example.com/photo.jpg',
      caption: 'look',
    });
    expect(res.body).toEqual({ ok: true, id: expect.any(String) });
    const entry = await waitUntil(async () => inbox().find((e) => e.kind === 'image' && e.sha256), Boolean);
    expect(entry).toMatchObject({ caption: 'look', mimetype: 'image/jpeg', sha256: sha(photo) });
  });

  it('sends a voice note and a named document', async () => {
    await call(`/v1/sessions/${sessionId}/send-media`, {
      to: TO,
      mediaType: 'audio',
      url: 'https://files.example.com/voice.ogg',
      ptt: true,
    });
    await call(`/v1/sessions/${sessionId}/send-media`, {
      to: TO,
      mediaType: 'document',
      url: 'https://files.example.com/contract.pdf',
      filename: 'contract-2026.pdf',
    });
    const note = await waitUntil(async () => inbox().find((e) => e.kind === 'voice' && e.sha256), Boolean);
    expect(note?.sha256).toBe(sha(voice));
    const doc = await waitUntil(async () => inbox().find((e) => e.kind === 'document' && e.sha256), Boolean);
    expect(doc).toMatchObject({ fileName: 'contract-2026.pdf', mimetype: 'application/pdf', sha256: sha(pdf) });
  });

  it('sends a document through messages/rich', async () => {
    await call(`/v1/sessions/${sessionId}/messages/rich`, {
      to: TO,
      documentUrl: 'https://files.example.com/contract.pdf',
      fileName: 'rich.pdf',
      mimetype: 'application/pdf',
    });
    await waitUntil(async () => inbox().find((e) => e.fileName === 'rich.pdf' && e.sha256 === sha(pdf)), Boolean);
  });

  it('answers 502 when the file cannot be fetched and 400 for private addresses, recording nothing sent', async () => {
    const gone = await call(`/v1/sessions/${sessionId}/send-media`, {
      to: TO,
      mediaType: 'image',
      url: 'https://files.example.com/gone.png',
    });
    expect(gone.status).toBe(502);
    expect(gone.body.error.code).toBe('NETWORK_ERROR');
    const inside = await call(`/v1/sessions/${sessionId}/send-media`, { to: TO, mediaType: 'image', url: 'http://127.0.0.1:9/x.png' });
    expect(inside.status).toBe(400);
    expect(
      (await call(`/v1/sessions/${sessionId}/send-media`, { to: TO, mediaType: 'gif', url: 'https://files.example.com/photo.jpg' })).status,
    ).toBe(400);
    expect(
      (
        await call(`/v1/sessions/${sessionId}/send-media`, {
          to: TO,
          mediaType: 'image',
          url: 'https://files.example.com/photo.jpg',
          ptt: true,
        })
      ).status,
    ).toBe(400);
  });

  it('refuses a literal private or loopback media host as an invalid body: 400 before 404 and 409', async () => {
    const { body: idle } = await http(ctx.app.baseUrl, 'POST', '/v1/sessions', { key: ctx.key, body: { name: 'idle' } });
    const unknown = '00000000-0000-0000-0000-000000000000';
    const message =
      'must point to a public address (private, loopback and link-local addresses are refused unless MEDIA_ALLOW_PRIVATE=true)';
    const before = await ctx.app.db.outgoingMessage.count();
    for (const url of [
      'http://127.0.0.1/a.png',
      'http://localhost:8080/a.png',
      'http://[::1]/a.png',
      'https://10.0.0.7/a.png',
      'http://169.254.169.254/latest',
      'http://127.1/a.png',
    ]) {
      for (const session of [idle.id, unknown, sessionId]) {
        const media = await call(`/v1/sessions/${session}/send-media`, { to: TO, mediaType: 'image', url });
        expect(media.status, `${url} on ${session}`).toBe(400);
        expect(media.body).toEqual({
          ok: false,
          error: { code: 'VALIDATION_FAILED', message: 'The request is not valid', details: [{ path: 'url', message }] },
        });
        const rich = await call(`/v1/sessions/${session}/messages/rich`, { to: TO, documentUrl: url, fileName: 'a.pdf' });
        expect(rich.status, `${url} on ${session}`).toBe(400);
        expect(rich.body.error.details).toEqual([{ path: 'documentUrl', message }]);
        const status = await call(`/v1/sessions/${session}/status/send`, { type: 'image', url, statusJidList: [TO] });
        expect(status.status, `${url} on ${session}`).toBe(400);
        expect(status.body.error.details).toEqual([{ path: 'url', message }]);
        const group = await call(`/v1/sessions/${session}/groups/888888888@g.us/send-media`, { mediaType: 'image', url });
        expect(group.status, `${url} on ${session}`).toBe(400);
        expect(group.body.error.details).toEqual([{ path: 'url', message }]);
      }
    }
    // every fault of the body at once
    const many = await call(`/v1/sessions/${idle.id}/send-media`, { to: 'nope', mediaType: 'gif', url: 'http://127.0.0.1/a.png' });
    expect(many.body.error.details.map((d: { path: string }) => d.path)).toEqual(['to', 'mediaType', 'url']);
    // a name is only known to be private once resolved, when the file is fetched: still refused, with a 400
    const named = await call(`/v1/sessions/${sessionId}/send-media`, { to: TO, mediaType: 'image', url: 'https://intranet.corp/a.png' });
    expect(named.status).toBe(400);
    expect(named.body.error.details).toEqual([{ path: 'url', message }]);
    // a public name on a session that is not connected is a 409: the body is fine
    expect(
      (await call(`/v1/sessions/${idle.id}/send-media`, { to: TO, mediaType: 'image', url: 'https://files.example.com/photo.jpg' })).status,
    ).toBe(409);
    expect(await ctx.app.db.outgoingMessage.count()).toBe(before);
  });

  it('publishes an image status the listed phone decrypts', async () => {
    const res = await call(`/v1/sessions/${sessionId}/status/send`, {
      type: 'image',
      url: 'https://files.example.com/photo.jpg',
      caption: 'status pic',
      statusJidList: [TO],
    });
    expect(res.body).toMatchObject({ ok: true, type: 'image', recipientsCount: 1 });
    const entry = await waitUntil(
      async () => inbox().find((e) => e.chat === 'status@broadcast' && e.kind === 'image' && e.sha256),
      Boolean,
    );
    expect(entry).toMatchObject({ caption: 'status pic', sha256: sha(photo) });
  });
});

describe('media URLs with MEDIA_ALLOW_PRIVATE', () => {
  let app: TestApp;
  let key: string;
  beforeAll(async () => {
    app = await startTestApp('sqlite', { MEDIA_ALLOW_PRIVATE: true });
    key = (await app.newAccount()).apiKey;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('lets a private literal host through validation, so an idle session answers 409', async () => {
    const { body: idle } = await http(app.baseUrl, 'POST', '/v1/sessions', { key, body: { name: 'idle' } });
    const media = await http(app.baseUrl, 'POST', `/v1/sessions/${idle.id}/send-media`, {
      key,
      body: { to: TO, mediaType: 'image', url: 'http://127.0.0.1/a.png' },
    });
    expect(media.status).toBe(409);
    expect(media.body.error.code).toBe('SESSION_NOT_CONNECTED');
    const rich = await http(app.baseUrl, 'POST', `/v1/sessions/${idle.id}/messages/rich`, {
      key,
      body: { to: TO, documentUrl: 'http://localhost/a.pdf' },
    });
    expect(rich.status).toBe(409);
  });
});
