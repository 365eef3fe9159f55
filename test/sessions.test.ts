import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds, http } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, scanQrImage, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

describe.each(dbKinds)('sessions over Baileys against the sandbox (%s)', (kind) => {
  let ctx: Linked;
  const call = (method: string, path: string, body?: unknown, key = ctx.key) => http(ctx.app.baseUrl, method, path, { key, body });

  beforeAll(async () => {
    ctx = await startWithSandbox(kind);
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('creates a session DISCONNECTED with phone and qrCode null', async () => {
    const res = await call('POST', '/v1/sessions', { name: 'shop' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      sessionName: 'shop',
      status: 'DISCONNECTED',
      qrCode: null,
      phone: null,
      lastError: null,
      lastSeen: null,
    });
    const qr = await call('GET', `/v1/sessions/${res.body.id}/qrcode`);
    expect(qr.body).toEqual({ sessionId: res.body.id, status: 'DISCONNECTED', qrCode: null, hasQrCode: false });
  });

  it('connects: CONNECTING, then QR_READY with a scannable PNG, then CONNECTED with the phone JID', async () => {
    ctx.sandbox.control.addPhone('15551110001');
    const { body: session } = await call('POST', '/v1/sessions', { name: 'qr' });
    const connecting = await call('POST', `/v1/sessions/${session.id}/connect`);
    expect(connecting.status).toBe(200);
    expect(['CONNECTING', 'QR_READY']).toContain(connecting.body.status);
    const ready = await waitUntil(
      () => call('GET', `/v1/sessions/${session.id}/qrcode`),
      (r) => r.body.hasQrCode === true,
    );
    expect(ready.body.status).toBe('QR_READY');
    expect(ready.body.qrCode).toMatch(/^data:image\/png;base64,/);
    const text = scanQrImage(ready.body.qrCode);
    expect(text).toContain(',');
    await ctx.sandbox.control.scanQr('15551110001', text);
    const connected = await waitUntil(
      () => call('GET', `/v1/sessions/${session.id}/status`),
      (r) => r.body.status === 'CONNECTED',
    );
    expect(connected.body).toMatchObject({ phone: '15551110001@s.whatsapp.net', qrCode: null, lastError: null });
    expect(connected.body.lastSeen).toMatch(/Z$/);
  });

  it('disconnects keeping phone and credentials, then reconnects without a QR', async () => {
    const id = await linkSession(ctx, '15551110002');
    const off = await call('POST', `/v1/sessions/${id}/disconnect`);
    expect(off.body).toMatchObject({ status: 'DISCONNECTED', phone: '15551110002@s.whatsapp.net', lastError: 'Disconnected manually' });
    expect(await ctx.app.db.sessionAuth.count({ where: { sessionId: id } })).toBeGreaterThan(0);
    await call('POST', '/v1/whatsapp/connect', { sessionId: id });
    const back = await waitUntil(
      () => call('GET', `/v1/whatsapp/status?sessionId=${id}`),
      (r) => r.body.status === 'CONNECTED' || r.body.status === 'QR_READY',
    );
    expect(back.body.status).toBe('CONNECTED');
  });

  it('comes back by itself when the network drops the link', async () => {
    const id = await linkSession(ctx, '15551110003');
    expect(ctx.sandbox.control.dropDevice('15551110003')).toBe(1);
    await waitUntil(
      () => call('GET', `/v1/sessions/${id}/status`),
      (r) => r.body.status !== 'CONNECTED',
      5_000,
    ).catch(() => undefined);
    const again = await waitUntil(
      () => call('GET', `/v1/sessions/${id}/status`),
      (r) => r.body.status === 'CONNECTED' && ctx.sandbox.control.phone('15551110003').devices.length === 1,
    );
    expect(again.body.phone).toBe('15551110003@s.whatsapp.net');
  });

  it('ends DISCONNECTED with lastError and no credentials when the phone logs the device out', async () => {
    const id = await linkSession(ctx, '15551110004');
    ctx.sandbox.control.logout('15551110004');
    const out = await waitUntil(
      () => call('GET', `/v1/sessions/${id}/status`),
      (r) => r.body.status === 'DISCONNECTED',
    );
    expect(out.body.lastError).toMatch(/Logged out/);
    expect(await ctx.app.db.sessionAuth.count({ where: { sessionId: id } })).toBe(0);
  });

  it('pauses (closing the link) and refuses QR_READY as a manual status', async () => {
    const id = await linkSession(ctx, '15551110005');
    const paused = await call('PATCH', `/v1/sessions/${id}/status`, { status: 'PAUSED' });
    expect(paused.body.status).toBe('PAUSED');
    const bad = await call('PATCH', `/v1/sessions/${id}/status`, { status: 'QR_READY' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe('status');
  });

  it('deletes a session and its credentials for good, unlinking the device from the phone', async () => {
    const id = await linkSession(ctx, '15551110006');
    expect(ctx.sandbox.control.phone('15551110006').devices).toHaveLength(1);
    const res = await call('DELETE', `/v1/sessions/${id}`);
    expect(res.body).toEqual({ ok: true });
    // The unlink request leaves before the answer; the phone handles it a moment later.
    await waitUntil(
      async () => ctx.sandbox.control.phone('15551110006').devices,
      (devices) => devices.length === 0,
    );
    expect(await ctx.app.db.sessionAuth.count({ where: { sessionId: id } })).toBe(0);
    expect((await call('GET', `/v1/sessions/${id}`)).status).toBe(404);
  });

  it.each([
    ['PAUSED', '15551110007', { status: 'PAUSED' }],
    ['manually DISCONNECTED', '15551110008', { status: 'DISCONNECTED' }],
  ])('deletes a %s session by removing the device from the phone with its stored credentials', async (_label, phone, body) => {
    const id = await linkSession(ctx, phone);
    const stopped = await call('PATCH', `/v1/sessions/${id}/status`, body);
    expect(stopped.body.status).toBe(body.status);
    // The link is closed: the device is still listed on the phone, with nothing connected to it.
    expect(ctx.sandbox.control.phone(phone).devices).toHaveLength(1);
    const res = await call('DELETE', `/v1/sessions/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    await waitUntil(
      async () => ctx.sandbox.control.phone(phone).devices,
      (devices) => devices.length === 0,
    );
    expect(await ctx.app.db.sessionAuth.count({ where: { sessionId: id } })).toBe(0);
    expect((await call('GET', `/v1/sessions/${id}`)).status).toBe(404);
  });

  it('renames, lists, and refuses another account on every route with 404', async () => {
    const { body: s } = await call('POST', '/v1/sessions', { name: 'before' });
    expect((await call('PATCH', `/v1/sessions/${s.id}`, { sessionName: 'after' })).body.sessionName).toBe('after');
    expect((await call('GET', '/v1/sessions')).body.map((x: { id: string }) => x.id)).toContain(s.id);
    const other = (await ctx.app.newAccount()).apiKey;
    const routes: Array<[string, string, unknown?]> = [
      ['GET', `/v1/sessions/${s.id}`],
      ['PATCH', `/v1/sessions/${s.id}`, { sessionName: 'x' }],
      ['DELETE', `/v1/sessions/${s.id}`],
      ['GET', `/v1/sessions/${s.id}/status`],
      ['PATCH', `/v1/sessions/${s.id}/status`, { status: 'PAUSED' }],
      ['GET', `/v1/sessions/${s.id}/qrcode`],
      ['POST', `/v1/sessions/${s.id}/connect`],
      ['POST', `/v1/sessions/${s.id}/disconnect`],
      ['POST', `/v1/sessions/${s.id}/pairing-code`, { phoneNumber: '15550000000' }],
      ['GET', `/v1/whatsapp/status?sessionId=${s.id}`],
      ['POST', '/v1/whatsapp/connect', { sessionId: s.id }],
      ['POST', '/v1/whatsapp/disconnect', { sessionId: s.id }],
    ];
    for (const [method, path, body] of routes) {
      const res = await call(method, path, body, other);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect((await call('GET', `/v1/sessions/${s.id}`)).body.sessionName).toBe('after');
  });
});
