import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphqlWs, http } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, scanQrImage, waitUntil } from './helpers/sandbox.ts';
import { sandboxAddress, startSandbox } from '../src/runtime/sandbox/sandbox.ts';
import { startTestApp } from './helpers/app.ts';

describe('live session behaviour: pairing codes, subscriptions, silent links, stream errors, two sessions talking', () => {
  let ctx: Linked;
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });

  beforeAll(async () => {
    const sandbox = await startSandbox();
    const app = await startTestApp(
      'sqlite',
      {},
      {
        target: { sandbox: sandboxAddress(sandbox) },
        keepAliveIntervalMs: 1_000,
        sessionTuning: { backoffBaseMs: 100, backoffMaxMs: 1_000, staleAfterMs: 3_000, lastSeenWriteEveryMs: 500 },
      },
    );
    ctx = { app, sandbox, key: (await app.newAccount()).apiKey };
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('keeps lastSeen moving while an idle link only exchanges keep-alive pings', async () => {
    const id = await linkSession(ctx, '15557770009');
    const first = (await call('GET', `/v1/sessions/${id}/status`)).body.lastSeen as string;
    expect(first).toMatch(/Z$/);
    const later = await waitUntil(
      () => call('GET', `/v1/sessions/${id}/status`),
      (r) => typeof r.body.lastSeen === 'string' && r.body.lastSeen > first,
    );
    expect(later.body.status).toBe('CONNECTED');
    await call('DELETE', `/v1/sessions/${id}`);
  });

  it('links with a pairing code entered on the phone', async () => {
    ctx.sandbox.control.addPhone('15551313001');
    const { body: s } = await call('POST', '/v1/sessions', { name: 'code' });
    const res = await call('POST', `/v1/sessions/${s.id}/pairing-code`, { phoneNumber: '15551313001' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ pairingCode: expect.stringMatching(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/) });
    await ctx.sandbox.control.enterPairingCode('15551313001', res.body.pairingCode);
    const done = await waitUntil(
      () => call('GET', `/v1/sessions/${s.id}/status`),
      (r) => r.body.status === 'CONNECTED',
    );
    expect(done.body.phone).toBe('15551313001@s.whatsapp.net');
    expect((await call('POST', `/v1/sessions/${s.id}/pairing-code`, { phoneNumber: '+1 555' })).status).toBe(400);
  });

  it('pushes each status change and each QR over sessionUpdates, in order', async () => {
    ctx.sandbox.control.addPhone('15551313002');
    const { body: s } = await call('POST', '/v1/sessions', { name: 'watched' });
    const client = graphqlWs(ctx.app.baseUrl, ctx.key);
    const seen: Array<{ status: string; qrCode: string | null }> = [];
    const connected = new Promise<void>((resolve, reject) => {
      client.subscribe<{ sessionUpdates: { status: string; qrCode: string | null } }>(
        { query: 'subscription($id: ID!) { sessionUpdates(sessionId: $id) { status qrCode phone } }', variables: { id: s.id } },
        {
          next: (m) => {
            if (!m.data) return;
            seen.push(m.data.sessionUpdates);
            if (m.data.sessionUpdates.status === 'QR_READY' && m.data.sessionUpdates.qrCode) {
              void ctx.sandbox.control.scanQr('15551313002', scanQrImage(m.data.sessionUpdates.qrCode));
            }
            if (m.data.sessionUpdates.status === 'CONNECTED') resolve();
          },
          error: reject,
          complete: () => undefined,
        },
      );
    });
    await new Promise((r) => setTimeout(r, 150));
    await call('POST', `/v1/sessions/${s.id}/connect`);
    await connected;
    await client.dispose();
    const statuses = seen.map((u) => u.status).filter((st, i, all) => i === 0 || all[i - 1] !== st);
    expect(statuses).toEqual(['CONNECTING', 'QR_READY', 'CONNECTING', 'CONNECTED']);
    expect(seen.find((u) => u.status === 'QR_READY')?.qrCode).toMatch(/^data:image\/png;base64,/);
  });

  it('restarts a link that went silent instead of leaving it connected in name only', async () => {
    const id = await linkSession(ctx, '15551313003');
    const before = ctx.sandbox.network.server.connectionsOf('15551313003')[0];
    expect(ctx.sandbox.control.freeze('15551313003')).toBe(1);
    await waitUntil(
      async () => ({
        live: ctx.sandbox.network.server.connectionsOf('15551313003'),
        status: (await call('GET', `/v1/sessions/${id}/status`)).body.status,
      }),
      (v) => v.status === 'CONNECTED' && v.live.length === 1 && v.live[0] !== before,
      20_000,
    );
  });

  it('recovers from a 503 stream error by reconnecting', async () => {
    const id = await linkSession(ctx, '15551313004');
    const before = ctx.sandbox.network.server.connectionsOf('15551313004')[0];
    expect(ctx.sandbox.control.streamError('15551313004', 503)).toBe(1);
    await waitUntil(
      async () => ({
        live: ctx.sandbox.network.server.connectionsOf('15551313004'),
        status: (await call('GET', `/v1/sessions/${id}/status`)).body.status,
      }),
      (v) => v.status === 'CONNECTED' && v.live.length === 1 && v.live[0] !== before,
    );
  });

  it('lets two sessions of the service message each other through the sandbox', async () => {
    const a = await linkSession(ctx, '15551313005', 'a');
    const b = await linkSession(ctx, '15551313006', 'b');
    await call('POST', `/v1/sessions/${a}/send`, { to: '15551313006', message: 'from session a' });
    const got = await call('GET', `/v1/sessions/${b}/incoming?waitMs=10000`);
    expect(got.body.items[0]).toMatchObject({ from: '15551313005@s.whatsapp.net', content: 'from session a', type: 'text', fromMe: false });
    await call('POST', `/v1/sessions/${b}/send`, { to: '15551313005', message: 'reply from b' });
    const back = await call('GET', `/v1/sessions/${a}/incoming?waitMs=10000`);
    expect(back.body.items.map((i: { content: string }) => i.content)).toContain('reply from b');
  });
  it('waits for the QR with qrcode?waitMs and for CONNECTED with status?waitFor (extensions), so a script needs no polling loop', async () => {
    ctx.sandbox.control.addPhone('15551313009');
    const { body: s } = await call('POST', '/v1/sessions', { name: 'waiting' });
    expect((await call('GET', `/v1/sessions/${s.id}/qrcode?waitMs=ten`)).status).toBe(400);
    expect((await call('GET', `/v1/sessions/${s.id}/status?waitFor=QR&waitMs=10`)).body.error.details).toEqual([
      { path: 'waitFor', message: 'must be one of DISCONNECTED, CONNECTING, QR_READY, CONNECTED, PAUSED' },
    ]);
    expect((await call('GET', '/v1/sessions/nope/qrcode?waitMs=10')).status).toBe(404);
    // Nothing to wait for before connect: the answer comes when waitMs pass, without a QR.
    expect((await call('GET', `/v1/sessions/${s.id}/qrcode?waitMs=50`)).body).toEqual({
      sessionId: s.id,
      status: 'DISCONNECTED',
      qrCode: null,
      hasQrCode: false,
    });
    await call('POST', `/v1/sessions/${s.id}/connect`);
    const qr = await call('GET', `/v1/sessions/${s.id}/qrcode?waitMs=15000`);
    expect(qr.body).toMatchObject({
      sessionId: s.id,
      status: 'QR_READY',
      hasQrCode: true,
      qrCode: expect.stringMatching(/^data:image\/png;base64,/),
    });
    const waiting = call('GET', `/v1/sessions/${s.id}/status?waitFor=CONNECTED&waitMs=15000`);
    await ctx.sandbox.control.scanQr('15551313009', scanQrImage(qr.body.qrCode));
    const connected = await waiting;
    expect(connected.status).toBe(200);
    expect(connected.body).toMatchObject({ id: s.id, status: 'CONNECTED', phone: '15551313009@s.whatsapp.net', qrCode: null });
    // Already there: answers at once; a status it never reaches answers the current one when waitMs pass.
    expect((await call('GET', `/v1/sessions/${s.id}/status?waitFor=CONNECTED&waitMs=30000`)).body.status).toBe('CONNECTED');
    expect((await call('GET', `/v1/whatsapp/status?sessionId=${s.id}&waitFor=PAUSED&waitMs=50`)).body.status).toBe('CONNECTED');
  });
});
