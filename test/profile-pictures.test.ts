import { get } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds, gql, http } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox } from './helpers/sandbox.ts';

const ME = '15556610001';
const ANN = '15556610002';
const BEN = '15556610003';
const CAT = '15556610004';
const jid = (n: string) => `${n}@s.whatsapp.net`;

/** A JPEG's first bytes, so the test can tell the picture it set from the sandbox's blank PNG. */
const JPEG = Buffer.from('ffd8ffe000104a46494600010100000100010000ffd9', 'hex');

describe.each(dbKinds)('profile pictures of contacts and groups, end to end on the sandbox (%s)', (kind) => {
  let ctx: Linked;
  let sessionId: string;
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });
  const S = () => `/v1/sessions/${sessionId}`;
  /** Fetches a picture URL as a browser would, trusting the sandbox media host's certificate. */
  const download = (url: string) =>
    new Promise<{ status: number; type: string | undefined; body: Buffer }>((resolve, reject) => {
      get(url, { agent: ctx.sandbox.network.media.agent() }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body: Buffer.concat(chunks) }));
        res.on('error', reject);
      }).on('error', reject);
    });

  beforeAll(async () => {
    ctx = await startWithSandbox(kind);
    sessionId = await linkSession(ctx, ME);
    for (const n of [ANN, BEN, CAT]) ctx.sandbox.control.addPhone(n);
  }, 60_000);
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it("answers a contact's picture URL, which serves the picture, full size or as a thumbnail", async () => {
    const set = ctx.sandbox.control.setPicture(ANN, { data: JPEG, mimetype: 'image/jpeg' });
    const full = await call('GET', `${S()}/chats/${ANN}/picture`);
    expect(full.status).toBe(200);
    expect(full.body).toEqual({ ok: true, chatId: jid(ANN), url: set.url });
    const fetched = await download(full.body.url);
    expect({ status: fetched.status, type: fetched.type, bytes: fetched.body.toString('hex') }).toEqual({
      status: 200,
      type: 'image/jpeg',
      bytes: JPEG.toString('hex'),
    });
    const preview = await call('GET', `${S()}/chats/${jid(ANN)}/picture?size=preview`);
    expect(preview.body).toEqual({ ok: true, chatId: jid(ANN), url: set.previewUrl });
    // asked by LID, the same person
    const byLid = await call('GET', `${S()}/chats/${ctx.sandbox.control.phone(ANN).lid}/picture`);
    expect(byLid.body.url).toBe(set.url);
    // GraphQL
    const graph = await gql(
      ctx.app.baseUrl,
      ctx.key,
      'query($s: ID!, $c: String!) { full: profilePictureUrl(sessionId: $s, chatId: $c) thumb: profilePictureUrl(sessionId: $s, chatId: $c, size: preview) }',
      { s: sessionId, c: ANN },
    );
    expect(graph.data).toEqual({ full: set.url, thumb: set.previewUrl });
  });

  it('answers null for a person with no picture, one who hides it, and one not on WhatsApp', async () => {
    expect((await call('GET', `${S()}/chats/${BEN}/picture`)).body).toEqual({ ok: true, chatId: jid(BEN), url: null });
    ctx.sandbox.control.setPicture(CAT, { hidden: true });
    expect((await call('GET', `${S()}/chats/${CAT}/picture`)).body).toEqual({ ok: true, chatId: jid(CAT), url: null });
    expect((await call('GET', `${S()}/chats/15556619999/picture`)).body.url).toBeNull();
    // a removed picture is gone, and so is its file
    const old = ctx.sandbox.control.setPicture(BEN);
    expect((await call('GET', `${S()}/chats/${BEN}/picture`)).body.url).toBe(old.url);
    ctx.sandbox.control.removePicture(BEN);
    expect((await call('GET', `${S()}/chats/${BEN}/picture`)).body.url).toBeNull();
    expect((await download(old.url)).status).toBe(404);
    const graph = await gql(ctx.app.baseUrl, ctx.key, 'query($s: ID!) { profilePictureUrl(sessionId: $s, chatId: "15556610003") }', {
      s: sessionId,
    });
    expect(graph.data).toEqual({ profilePictureUrl: null });
  });

  it("answers a group's picture to its members", async () => {
    const created = await call('POST', `${S()}/groups`, { subject: 'pictured', participants: [ANN] });
    expect(created.status).toBe(200);
    const groupId: string = created.body.id;
    expect((await call('GET', `${S()}/chats/${groupId}/picture`)).body).toEqual({ ok: true, chatId: groupId, url: null });
    const set = ctx.sandbox.control.setPicture(groupId);
    expect((await call('GET', `${S()}/chats/${groupId}/picture`)).body).toEqual({ ok: true, chatId: groupId, url: set.url });
    expect((await download(set.url)).type).toBe('image/png');
  });

  it('validates the chat and the size before looking for the session (400, 404, 409)', async () => {
    const badChat = await call('GET', `${S()}/chats/not-a-chat/picture`);
    expect({ status: badChat.status, code: badChat.body.error.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
    const badSize = await call('GET', `${S()}/chats/${ANN}/picture?size=huge`);
    expect({ status: badSize.status, details: badSize.body.error.details }).toEqual({
      status: 400,
      details: [{ path: 'size', message: 'must be "image" (full size) or "preview" (thumbnail)' }],
    });
    expect((await call('GET', `/v1/sessions/nope/chats/${ANN}/picture`)).status).toBe(404);
    const idle = (await call('POST', '/v1/sessions', { name: 'idle' })).body.id;
    const notConnected = await call('GET', `/v1/sessions/${idle}/chats/${ANN}/picture`);
    expect({ status: notConnected.status, code: notConnected.body.error.code }).toEqual({ status: 409, code: 'SESSION_NOT_CONNECTED' });
  });
});
