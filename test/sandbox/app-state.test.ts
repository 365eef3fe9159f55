import { Writable } from 'node:stream';
import makeWASocket, { proto } from 'baileys';
import type { AuthenticationState, ChatUpdate, LTHashState, UserFacingSocketConfig, WAMessageUpdate } from 'baileys';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxSocketOptions, startSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { memoryAuth, waitFor } from './helpers.ts';

const ME = '15553440001';
const ANA = '15553440002';
const BEN = '15553440003';

/**
 * rc14 announces presence when a link opens, before it has synced its push name (critical_block's
 * setting_pushName) on a first link, and warns then; nothing the network answers changes that.
 */
const NAMELESS = /^no name present, ignoring presence update request/;

/** A plain rc14 socket (Baileys' own history defaults) whose warnings and errors are kept. */
const socketWithLog = (sandbox: Sandbox, auth: { state: AuthenticationState }, complaints: string[]) => {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as { level: number; msg?: string };
        // the 515 restart after pairing is how every link starts; rc14 logs it as an error
        if (entry.level >= 40 && !line.includes('"code":"515"') && !NAMELESS.test(entry.msg ?? '')) complaints.push(line);
      }
      done();
    },
  });
  const config: Partial<UserFacingSocketConfig> = {
    shouldSyncHistoryMessage: ({ syncType }) => syncType !== proto.HistorySync.HistorySyncType.FULL,
    // rc14 checks neither MAC by default; these sockets check both, so a wrong one fails the test
    appStateMacVerification: { patch: true, snapshot: true },
  };
  const sock = makeWASocket({ auth: auth.state, logger: pino({ level: 'info' }, sink), ...sandboxSocketOptions(sandbox), ...config });
  const chatUpdates: Array<Partial<ChatUpdate>> = [];
  const messageUpdates: WAMessageUpdate[] = [];
  sock.ev.on('chats.update', (updates) => chatUpdates.push(...updates));
  sock.ev.on('messages.update', (updates) => messageUpdates.push(...updates));
  const received = new Set<string>();
  sock.ev.on('messages.upsert', ({ messages }) => {
    for (const m of messages) if (m.key.id) received.add(m.key.id);
  });
  let open = false;
  let closed = false;
  let qr = '';
  sock.ev.on('connection.update', (u) => {
    if (u.qr) qr = u.qr;
    if (u.connection === 'open') open = true;
    if (u.connection === 'close') closed = true;
  });
  return { sock, chatUpdates, messageUpdates, received, isOpen: () => open, isClosed: () => closed, qr: () => qr };
};

/** Links a new device of ME through the QR flow and its 515 restart; answers the reconnected socket. */
const linkDevice = async (sandbox: Sandbox, complaints: string[]) => {
  const auth = memoryAuth();
  const first = socketWithLog(sandbox, auth, complaints);
  await waitFor(() => first.qr() || undefined, 15_000);
  await sandbox.control.scanQr(ME, first.qr());
  await waitFor(() => first.isClosed(), 15_000);
  const socket = socketWithLog(sandbox, auth, complaints);
  await waitFor(() => socket.isOpen(), 15_000);
  return { ...socket, auth };
};

const syncedVersion = async (auth: { state: AuthenticationState }, name: string): Promise<number | undefined> => {
  const got = await auth.state.keys.get('app-state-sync-version', [name]);
  return (got[name] as LTHashState | undefined)?.version;
};

/**
 * App state as rc14's own Baileys reads and writes it: the phone shares its key at pairing, its user's
 * archive / pin / mute / read marks reach a linked socket as chats.update, a socket's own chatModify
 * reaches the account's other device, a device linked later restores the state from a snapshot, and the
 * phone reading a chat reaches the socket as a READ status; with history sync on, none of it makes
 * Baileys log a warning or an error.
 */
describe('sandbox: app state sync and read-self receipts, read by unmodified Baileys sockets', () => {
  let sandbox: Sandbox;
  let device: Awaited<ReturnType<typeof linkDevice>>;
  const complaints: string[] = [];
  const anaLid = () => sandbox.control.phone(ANA).lid;

  beforeAll(async () => {
    sandbox = await startSandbox();
    sandbox.control.addPhone(ME, 'Me');
    sandbox.control.addPhone(ANA, 'Ana');
    sandbox.control.addPhone(BEN, 'Ben');
    sandbox.control.giveHistory(ME, {
      chats: [{ with: ANA, messages: [{ id: 'ANA-PAST', text: 'before the link', at: Math.floor(Date.now() / 1000) - 3600 }] }],
    });
    device = await linkDevice(sandbox, complaints);
    // the history chunks came, and with them the first app state sync of all five collections
    await waitFor(() => sandbox.control.historySent(ME).some((c) => c.syncType === 'PUSH_NAME') || undefined, 20_000);
    await new Promise((r) => setTimeout(r, 500));
  }, 60_000);
  afterAll(async () => {
    device?.sock.end(undefined);
    await sandbox?.close();
  });

  it('shares the app state key at pairing, and a first sync of empty collections raises no warning or error', async () => {
    expect(device.auth.state.creds.myAppStateKeyId).toBeTruthy();
    // nothing to store: rc14 keeps a collection's state once a snapshot or a patch came
    for (const name of ['critical_block', 'critical_unblock_low', 'regular_high', 'regular_low', 'regular']) {
      expect(await syncedVersion(device.auth, name)).toBeUndefined();
    }
    expect(complaints).toEqual([]);
  });

  it("gives a linked socket the phone's archive, pin and mute as chats.update", async () => {
    const muteUntil = Date.now() + 8 * 3600_000;
    expect(await sandbox.control.chatAction(ME, ANA, { archive: true })).toMatchObject({
      chat: anaLid(),
      collection: 'regular_low',
      version: 1,
      notified: 1,
    });
    await waitFor(() => device.chatUpdates.find((u) => u.id === anaLid() && u.archived === true), 10_000);
    await sandbox.control.chatAction(ME, ANA, { pin: true });
    const pinned = await waitFor(() => device.chatUpdates.find((u) => u.id === anaLid() && typeof u.pinned === 'number'), 10_000);
    expect(pinned.pinned).toBeGreaterThan(0);
    expect(await sandbox.control.chatAction(ME, ANA, { mute: muteUntil })).toMatchObject({ collection: 'regular_high', version: 1 });
    await waitFor(() => device.chatUpdates.find((u) => u.id === anaLid() && u.muteEndTime === muteUntil), 10_000);
    await sandbox.control.chatAction(ME, ANA, { archive: false });
    await waitFor(() => device.chatUpdates.find((u) => u.id === anaLid() && u.archived === false), 10_000);
    await sandbox.control.chatAction(ME, ANA, { markRead: true });
    await waitFor(() => device.chatUpdates.find((u) => u.id === anaLid() && u.unreadCount === 0), 10_000);
    expect(await syncedVersion(device.auth, 'regular_low')).toBe(4);
    expect(complaints).toEqual([]);
  });

  it("passes a socket's own chatModify to the account's other device, and a device linked later restores the state from a snapshot", async () => {
    const second = await linkDevice(sandbox, complaints);
    try {
      // linked after five patches: its first sync of each collection asks for a snapshot
      for (let waited = 0; (await syncedVersion(second.auth, 'regular_low')) !== 4 && waited < 15_000; waited += 50) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await syncedVersion(second.auth, 'regular_low')).toBe(4);
      expect(await syncedVersion(second.auth, 'regular_high')).toBe(1);
      const benJid = `${BEN}@s.whatsapp.net`;
      await second.sock.chatModify({ pin: true }, benJid);
      await waitFor(() => device.chatUpdates.find((u) => u.id === benJid && typeof u.pinned === 'number'), 10_000);
      expect(await syncedVersion(device.auth, 'regular_low')).toBe(5);
      expect(complaints).toEqual([]);
    } finally {
      second.sock.end(undefined);
    }
  });

  it('gives a linked socket the phone reading a chat as a read-self receipt: READ on the messages it received there', async () => {
    const one = await sandbox.control.sendText(ANA, ME, 'are you there?');
    const two = await sandbox.control.sendText(ANA, ME, 'hello?');
    // read once the socket has them (a receipt that comes while rc14 still buffers a message's upsert is merged into it)
    await waitFor(() => (device.received.has(one.id) && device.received.has(two.id)) || undefined, 10_000);
    // one receipt per open link of the account (the second device's may still be closing)
    expect(sandbox.control.readChat(ME, ANA)).toMatchObject({ ids: [one.id, two.id] });
    const read = await waitFor(() => {
      const found = device.messageUpdates.filter((u) => u.update.status === proto.WebMessageInfo.Status.READ);
      return found.length === 2 ? found : undefined;
    }, 10_000);
    expect(read.map((u) => u.key.id).sort()).toEqual([one.id, two.id].sort());
    expect(read[0]?.key).toMatchObject({ remoteJid: anaLid(), fromMe: false });
    expect(complaints).toEqual([]);
  });

  it('holds the answers to app state fetches while the control API asks, and gives them when let go', async () => {
    const hold = async (body: { hold: boolean }) =>
      (
        await fetch(new URL(`/phones/${ME}/app-state-hold`, sandbox.controlUrl), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json();
    expect(await hold({ hold: true })).toEqual({ hold: true });
    const before = device.chatUpdates.length;
    // the phone unpins Ana's chat: the device is told (server_sync) and fetches the patch, whose answer waits
    await sandbox.control.chatAction(ME, ANA, { pin: false });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(device.chatUpdates.slice(before)).toEqual([]);
    expect(await hold({ hold: false })).toEqual({ hold: false });
    await waitFor(() => device.chatUpdates.slice(before).find((u) => u.id === anaLid() && u.pinned === null), 10_000);
    expect(complaints).toEqual([]);
  });
});
