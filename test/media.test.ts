import { createHash, randomBytes } from 'node:crypto';
import { http as mswHttp, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15551212001';
const TO = '15551212002';
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const photo = randomBytes(4096);
const voice = randomBytes(2048);
const pdf = Buffer.from('%PDF-1.4 contract');

const files = setupServer(
  mswHttp.get('https://files.example.com/photo.jpg', () => HttpResponse.arrayBuffer(photo.buffer.slice(photo.byteOffset, photo.byteOffset + photo.length), { headers: { 'content-type': 'image/jpeg' } })),
  mswHttp.get('https://files.example.com/voice.ogg', () => HttpResponse.arrayBuffer(voice.buffer.slice(voice.byteOffset, voice.byteOffset + voice.length), { headers: { 'content-type': 'audio/ogg' } })),
  mswHttp.get('https://files.example.com/contract.pdf', () => HttpResponse.arrayBuffer(pdf.buffer.slice(pdf.byteOffset, pdf.byteOffset + pdf.length), { headers: { 'content-type': 'application/pdf' } })),
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
    const res = await call(`/v1/sessions/${sessionId}/send-media`, { to: TO, mediaType: 'image', url: 'https://files.example.com/photo.jpg', caption: 'look' });
    expect(res.body).toEqual({ ok: true, id: expect.any(String) });
    const entry = await waitUntil(async () => inbox().find((e) => e.kind === 'image' && e.sha256), Boolean);
    expect(entry).toMatchObject({ caption: 'look', mimetype: 'image/jpeg', sha256: sha(photo) });
  });

  it('sends a voice note and a named document', async () => {
    await call(`/v1/sessions/${sessionId}/send-media`, { to: TO, mediaType: 'audio', url: 'https://files.example.com/voice.ogg', ptt: true });
    await call(`/v1/sessions/${sessionId}/send-media`, { to: TO, mediaType: 'document', url: 'https://files.example.com/contract.pdf', filename: 'contract-2026.pdf' });
    const note = await waitUntil(async () => inbox().find((e) => e.kind === 'voice' && e.sha256), Boolean);
    expect(note?.sha256).toBe(sha(voice));
    const doc = await waitUntil(async () => inbox().find((e) => e.kind === 'document' && e.sha256), Boolean);
    expect(doc).toMatchObject({ fileName: 'contract-2026.pdf', mimetype: 'application/pdf', sha256: sha(pdf) });
  });

  it('sends a document through messages/rich', async () => {
    await call(`/v1/sessions/${sessionId}/messages/rich`, { to: TO, documentUrl: 'https://files.example.com/contract.pdf', fileName: 'rich.pdf', mimetype: 'application/pdf' });
    await waitUntil(async () => inbox().find((e) => e.fileName === 'rich.pdf' && e.sha256 === sha(pdf)), Boolean);
  });

  it('answers 502 when the file cannot be fetched and 400 for private addresses, recording nothing sent', async () => {
    const gone = await call(`/v1/sessions/${sessionId}/send-media`, { to: TO, mediaType: 'image', url: 'https://files.example.com/gone.png' });
    expect(gone.status).toBe(502);
    expect(gone.body.error.code).toBe('NETWORK_ERROR');
    const inside = await call(`/v1/sessions/${sessionId}/send-media`, { to: TO, mediaType: 'image', url: 'http://127.0.0.1:9/x.png' });
    expect(inside.status).toBe(400);
    expect((await call(`/v1/sessions/${sessionId}/send-media`, { to: TO, mediaType: 'gif', url: 'https://files.example.com/photo.jpg' })).status).toBe(400);
    expect((await call(`/v1/sessions/${sessionId}/send-media`, { to: TO, mediaType: 'image', url: 'https://files.example.com/photo.jpg', ptt: true })).status).toBe(400);
  });

  it('publishes an image status the listed phone decrypts', async () => {
    const res = await call(`/v1/sessions/${sessionId}/status/send`, { type: 'image', url: 'https://files.example.com/photo.jpg', caption: 'status pic', statusJidList: [TO] });
    expect(res.body).toMatchObject({ ok: true, type: 'image', recipientsCount: 1 });
    const entry = await waitUntil(async () => inbox().find((e) => e.chat === 'status@broadcast' && e.kind === 'image' && e.sha256), Boolean);
    expect(entry).toMatchObject({ caption: 'status pic', sha256: sha(photo) });
  });
});
