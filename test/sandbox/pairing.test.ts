import { DisconnectReason } from 'baileys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { startSandbox, trustSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { linkedSocket, memoryAuth, openSocket, waitFor } from './helpers.ts';

describe('sandbox: linking a real Baileys socket', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox();
    trustSandbox(sandbox.rootPublicKey);
    sandbox.control.addPhone('15550000001', 'Alice');
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('pairs by QR, restarts on 515, logs in and opens; a restart with saved credentials needs no QR', async () => {
    const auth = memoryAuth();
    const first = openSocket(sandbox, auth);
    const { qr } = await first.waitFor((u) => Boolean(u.qr));
    expect(qr?.split(',')).toHaveLength(5);
    const linked = await sandbox.control.scanQr('15550000001', qr ?? '');
    expect(linked.jid).toMatch(/^15550000001:\d+@s\.whatsapp\.net$/);
    const closed = await first.waitFor((u) => u.connection === 'close');
    expect((closed.lastDisconnect?.error as { output?: { statusCode?: number } })?.output?.statusCode).toBe(
      DisconnectReason.restartRequired,
    );
    expect(auth.state.creds.me?.id).toBe(linked.jid);

    const second = openSocket(sandbox, auth);
    await second.waitFor((u) => u.connection === 'open');
    expect(second.updates.some((u) => u.qr)).toBe(false);
    second.sock.end(undefined);

    const third = openSocket(sandbox, auth);
    await third.waitFor((u) => u.connection === 'open');
    expect(third.updates.some((u) => u.qr)).toBe(false);
    expect(sandbox.control.phone('15550000001').devices).toEqual([linked.deviceId]);

    expect(sandbox.control.logout('15550000001')).toBe(1);
    const out = await third.waitFor((u) => u.connection === 'close');
    expect((out.lastDisconnect?.error as { output?: { statusCode?: number } })?.output?.statusCode).toBe(DisconnectReason.loggedOut);
  });

  it("replaces a device's open connection when the device logs in again: the first hears the conflict and gets nothing more", async () => {
    sandbox.control.addPhone('15550000003', 'Cy');
    const first = await linkedSocket(sandbox, '15550000002');
    const firstGot: string[] = [];
    first.sock.ev.on('messages.upsert', ({ messages }) => firstGot.push(...messages.map((m) => m.message?.conversation ?? '')));

    // The same device's credentials log in a second time (another process that took the session over).
    const second = openSocket(sandbox, first.auth);
    const secondGot: string[] = [];
    second.sock.ev.on('messages.upsert', ({ messages }) => secondGot.push(...messages.map((m) => m.message?.conversation ?? '')));
    await second.waitFor((u) => u.connection === 'open');
    const replaced = await first.waitFor((u) => u.connection === 'close');
    expect((replaced.lastDisconnect?.error as { output?: { statusCode?: number } })?.output?.statusCode).toBe(
      DisconnectReason.connectionReplaced,
    );

    await sandbox.control.sendText('15550000003', '15550000002', 'after the second login');
    await waitFor(() => secondGot.includes('after the second login'));
    expect(firstGot).toEqual([]);
    second.sock.end(undefined);
  });
});

describe('sandbox: linking by pairing code', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox();
    trustSandbox(sandbox.rootPublicKey);
    sandbox.control.addPhone('15550000002', 'Bea');
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('links when the phone enters the 8-character code, then logs in', async () => {
    const auth = memoryAuth();
    const first = openSocket(sandbox, auth);
    await first.waitFor((u) => Boolean(u.qr));
    const code = await first.sock.requestPairingCode('15550000002');
    expect(code).toMatch(/^[A-Z0-9]{8}$/);
    const linked = await sandbox.control.enterPairingCode('15550000002', `${code.slice(0, 4)}-${code.slice(4)}`);
    expect(linked.jid).toMatch(/^15550000002:\d+@s\.whatsapp\.net$/);
    await first.waitFor((u) => u.connection === 'close');
    const second = openSocket(sandbox, auth);
    await second.waitFor((u) => u.connection === 'open');
    expect(auth.state.creds.me?.id).toBe(linked.jid);
    second.sock.end(undefined);
  });
});
