import { proto } from 'baileys';
import type { BaileysEventMap, UserFacingSocketConfig, WAMessage } from 'baileys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { linkedSocket, waitFor } from './helpers.ts';
import type { TestSocket } from './helpers.ts';

type HistorySet = BaileysEventMap['messaging-history.set'];

const ME = '15553330001';
const ANA = '15553330002';
const BEN = '15553330003';
const DAY = 86_400;

/**
 * History sync as rc14's own Baileys reads it: a plain socket (Baileys' default history settings, not
 * the service) linked to a phone that was given past chats gets messaging-history.set with them, and its
 * fetchMessageHistory is answered with older messages of one chat.
 */
describe('sandbox: history sync to a newly linked device, read by an unmodified Baileys socket', () => {
  let sandbox: Sandbox;
  let socket: TestSocket;
  const sets: HistorySet[] = [];
  const now = Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    sandbox = await startSandbox();
    sandbox.control.addPhone(ME, 'Me');
    sandbox.control.addPhone(ANA, 'Ana');
    sandbox.control.addPhone(BEN, 'Ben');
    sandbox.control.giveHistory(
      ME,
      {
        chats: [
          {
            with: ANA,
            messages: [
              { id: 'ANA-OLD-1', text: 'a long time ago', at: now - 200 * DAY },
              { id: 'ANA-1', text: 'hi me', at: now - 3 * DAY },
              { id: 'ANA-2', fromMe: true, text: 'hi ana', at: now - 2 * DAY },
            ],
          },
          { with: BEN, messages: [{ id: 'BEN-1', text: 'ben here', at: now - DAY }] },
        ],
      },
      2,
    );
    // Baileys' defaults: history on (FULL chunks refused), syncFullHistory true; only the sandbox's
    // connection options, not its history switch, come from sandboxSocketOptions.
    const defaults: Partial<UserFacingSocketConfig> = {
      shouldSyncHistoryMessage: ({ syncType }) => syncType !== proto.HistorySync.HistorySyncType.FULL,
    };
    socket = await linkedSocket(sandbox, ME, defaults, (s) => s.sock.ev.on('messaging-history.set', (set) => sets.push(set)));
  }, 60_000);
  afterAll(async () => {
    socket?.sock.end(undefined);
    await sandbox?.close();
  });

  const ids = (messages: WAMessage[]) => messages.map((m) => m.key.id).sort();

  it('emits messaging-history.set per chunk with the recent messages, chats, push names and progress', async () => {
    await waitFor(() => sets.some((s) => s.syncType === proto.HistorySync.HistorySyncType.PUSH_NAME), 20_000);
    const recent = sets.filter((s) => s.syncType !== proto.HistorySync.HistorySyncType.PUSH_NAME);
    // 3 recent messages, 2 per chunk: an INITIAL_BOOTSTRAP and a RECENT chunk (the 200-day-old one is not recent)
    expect(recent.map((s) => [s.syncType, s.chunkOrder, s.progress])).toEqual([
      [proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP, 0, 50],
      [proto.HistorySync.HistorySyncType.RECENT, 1, 100],
    ]);
    expect(ids(recent.flatMap((s) => s.messages))).toEqual(['ANA-1', 'ANA-2', 'BEN-1']);
    const anaSays = recent.flatMap((s) => s.messages).find((m) => m.key.id === 'ANA-1');
    expect(anaSays?.key).toMatchObject({ remoteJid: `${ANA}@s.whatsapp.net`, fromMe: false });
    expect(anaSays?.message?.conversation).toBe('hi me');
    expect(Number(anaSays?.messageTimestamp)).toBe(now - 3 * DAY);
    expect(recent[0]?.chats.map((c) => c.id).sort()).toEqual([`${ANA}@s.whatsapp.net`, `${BEN}@s.whatsapp.net`]);
    const names = sets.find((s) => s.syncType === proto.HistorySync.HistorySyncType.PUSH_NAME);
    expect(names?.contacts.map((c) => [c.id, c.notify]).sort()).toEqual([
      [`${ANA}@s.whatsapp.net`, 'Ana'],
      [`${BEN}@s.whatsapp.net`, 'Ben'],
    ]);
    expect(sandbox.control.historySent(ME).map((c) => c.syncType)).toEqual(['INITIAL_BOOTSTRAP', 'RECENT', 'PUSH_NAME']);
  });

  it('answers fetchMessageHistory with the older messages of the chat as an ON_DEMAND chunk', async () => {
    const requestId = await socket.sock.fetchMessageHistory(
      10,
      { remoteJid: `${ANA}@s.whatsapp.net`, id: 'ANA-1', fromMe: false },
      (now - 3 * DAY) * 1000,
    );
    const onDemand = await waitFor(() => sets.find((s) => s.syncType === proto.HistorySync.HistorySyncType.ON_DEMAND), 15_000);
    expect(ids(onDemand.messages)).toEqual(['ANA-OLD-1']);
    expect(onDemand.peerDataRequestSessionId).toBe(requestId);
  });
});

/**
 * The patch's beforeHistoryChunk socket option (patches/, docs/baileys-patch.md): the service stores a
 * chunk before the next is downloaded and decoded, so a phone's whole history is never held in memory at
 * once. Without the patch the option is ignored and the chunks arrive while the promise is pending.
 */
describe('sandbox: the patched beforeHistoryChunk holds each history notification until its promise settles', () => {
  let sandbox: Sandbox;
  let socket: TestSocket | undefined;
  afterAll(async () => {
    socket?.sock.end(undefined);
    await sandbox?.close();
  });

  it('takes no chunk while the first call is pending, then one call per chunk', async () => {
    const me = '15553330011';
    const ana = '15553330012';
    const now = Math.floor(Date.now() / 1000);
    sandbox = await startSandbox();
    sandbox.control.addPhone(me, 'Me');
    sandbox.control.addPhone(ana, 'Ana');
    sandbox.control.giveHistory(
      me,
      { chats: [{ with: ana, messages: [1, 2, 3].map((i) => ({ id: `GATE-${i}`, text: `note ${i}`, at: now - i * DAY })) }] },
      1,
    );
    const sets: HistorySet[] = [];
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const calls: number[] = [];
    const config = {
      shouldSyncHistoryMessage: ({ syncType }: proto.Message.IHistorySyncNotification) =>
        syncType !== proto.HistorySync.HistorySyncType.FULL,
      beforeHistoryChunk: () => {
        calls.push(sets.length);
        return gate;
      },
    } as Partial<UserFacingSocketConfig>;
    socket = await linkedSocket(sandbox, me, config, (s) => s.sock.ev.on('messaging-history.set', (set) => sets.push(set)));
    await waitFor(() => calls.length > 0, 20_000);
    // The phone sent every chunk (three of one message, and its push names) at link.
    await waitFor(() => sandbox.control.historySent(me).length >= 4, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(calls).toEqual([0]);
    expect(sets).toEqual([]);

    open();
    await waitFor(() => sets.some((s) => s.syncType === proto.HistorySync.HistorySyncType.PUSH_NAME), 20_000);
    expect(sets.flatMap((s) => s.messages.map((m) => m.key.id)).sort()).toEqual(['GATE-1', 'GATE-2', 'GATE-3']);
    // Each later chunk was taken after the chunks before it were handed over.
    expect(calls).toEqual(sets.map((_, i) => i));
  }, 60_000);
});
