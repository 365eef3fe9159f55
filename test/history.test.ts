import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatStatesFromHistory } from '../src/resolvers/conversations.ts';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import type { MessageStore } from '../src/runtime/message-store.ts';
import type { ReceivedMessage } from '../src/runtime/ports/incoming.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { sandboxAddress, startSandbox } from '../src/runtime/sandbox/sandbox.ts';
import type { Settings } from '../src/runtime/settings.ts';
import { dbKinds, http, startTestApp } from './helpers/app.ts';
import type { Json, TestApp } from './helpers/app.ts';
import { startReceiver } from './helpers/receiver.ts';
import type { Receiver } from './helpers/receiver.ts';
import { linkSession, linkThroughQr, waitUntil } from './helpers/sandbox.ts';

const DAY = 86_400;
const jid = (n: string) => `${n}@s.whatsapp.net`;

/** History sync from the phone at link (docs/conversations.md, History from the phone). */
describe.each(dbKinds)('history sync from the phone (%s)', (kind) => {
  let sandbox: Sandbox;
  let receiver: Receiver;
  const now = Math.floor(Date.now() / 1000);
  let phones = 0;
  const apps: Array<{ app: TestApp; database: TestDatabase }> = [];
  const secrets: string[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox();
    receiver = await startReceiver();
  }, 60_000);
  afterAll(async () => {
    for (const { app, database } of apps) {
      await app.close();
      await database.drop();
    }
    await receiver?.close();
    await sandbox?.close();
  });

  /** A phone with three past chats (one message 200 days old), linked to a new session of a new service. */
  const linkWithHistory = async (
    overrides: Partial<Settings> = {},
    beforeLink: (phones: { me: string; ana: string }) => Promise<void> = async () => {},
    { connected = true }: { connected?: boolean } = {},
  ) => {
    phones += 1;
    const me = `1555888${String(phones).padStart(2, '0')}00`;
    const [ana, ben, cy] = [1, 2, 3].map((i) => `1555888${String(phones).padStart(2, '0')}0${i}`) as [string, string, string];
    sandbox.control.addPhone(me, 'Me');
    sandbox.control.addPhone(ana, 'Ana');
    sandbox.control.addPhone(ben, 'Ben');
    sandbox.control.addPhone(cy, 'Cy');
    const p = `P${phones}`;
    sandbox.control.giveHistory(
      me,
      {
        chats: [
          {
            with: ana,
            messages: [
              { id: `${p}-ANA-OLD`, text: 'long ago', at: now - 200 * DAY },
              {
                id: `${p}-ANA-1`,
                text: 'hello',
                at: now - 5 * DAY,
                reactions: [
                  { from: ana, emoji: '❤️', at: now - 5 * DAY + 60 },
                  { from: 'me', emoji: '👍', at: now - 5 * DAY + 120 },
                ],
              },
              { id: `${p}-ANA-2`, fromMe: true, text: 'hi ana', at: now - 4 * DAY },
            ],
          },
          { with: ben, messages: [{ id: `${p}-BEN-1`, text: 'ben here', at: now - 3 * DAY }] },
          { with: cy, messages: [{ id: `${p}-CY-1`, text: 'cy here', at: now - 40 * DAY }] },
        ],
      },
      2,
    );
    const database = await createTestDatabase(kind);
    const app = await startTestApp(
      kind,
      { WEBHOOK_ALLOW_PRIVATE: true, ...overrides },
      { target: { sandbox: sandboxAddress(sandbox) } },
      { existing: database },
    );
    apps.push({ app, database });
    const key = (await app.newAccount()).apiKey;
    const hook = await http(app.baseUrl, 'POST', '/v1/webhooks', { key, body: { url: receiver.url, events: ['*'] } });
    expect(hook.status).toBe(201);
    secrets.push((hook.body as Json).secret);
    receiver.verifyWith(...secrets);
    await beforeLink({ me, ana });
    const sessionId = connected
      ? await linkSession({ app, sandbox, key }, me)
      : await linkThroughQr(app.baseUrl, key, sandbox, me, 'main', 15_000, 'scanned');
    return { app, key, sessionId, me, ana, ben, cy, p };
  };
  const eventsOf = (sessionId: string, type: string) =>
    receiver.received.filter((r) => r.payload?.type === type && r.payload.data.sessionId === sessionId).map((r) => r.payload.data);

  it('stores the past messages as history by default (90 days), one history.synced per chunk and no message.received', async () => {
    const { app, sessionId, me, ana, ben, cy, p } = await linkWithHistory();
    // 4 messages within 90 days, 2 per chunk: INITIAL_BOOTSTRAP and RECENT, then PUSH_NAME
    const synced = await waitUntil(
      async () => eventsOf(sessionId, 'history.synced'),
      (e) => e.length >= 3,
      20_000,
    );
    expect(synced.map((e) => [e.syncType, e.chunkOrder, e.progress, e.messages, e.stored, e.changes])).toEqual([
      ['initial_bootstrap', 0, 50, 2, 2, 0],
      ['recent', 1, 100, 2, 2, 2],
      ['push_name', 2, 100, 0, 0, 0],
    ]);
    const rows = await app.db.message.findMany({ where: { sessionId }, orderBy: { messageTimestamp: 'asc' } });
    expect(rows.map((r) => [r.waMessageId, r.source, r.direction, r.chatId, r.text])).toEqual([
      [`${p}-CY-1`, 'history', 'in', jid(cy), 'cy here'],
      [`${p}-ANA-1`, 'history', 'in', jid(ana), 'hello'],
      [`${p}-ANA-2`, 'history', 'out', jid(ana), 'hi ana'],
      [`${p}-BEN-1`, 'history', 'in', jid(ben), 'ben here'],
    ]);
    const chats = await app.db.chat.findMany({ where: { sessionId }, orderBy: { chatId: 'asc' } });
    expect(chats.map((c) => [c.chatId, c.name, c.lastMessageId, c.unreadCount])).toEqual([
      [jid(ana), 'Ana', `${p}-ANA-2`, 0],
      [jid(ben), 'Ben', `${p}-BEN-1`, 0],
      [jid(cy), 'Cy', `${p}-CY-1`, 0],
    ]);
    expect(eventsOf(sessionId, 'message.received')).toEqual([]);
    // The reactions the phone kept on a message are its reactions in the store: Ana's and the account's own.
    const hello = rows.find((r) => r.waMessageId === `${p}-ANA-1`);
    const reactions = await app.db.messageReaction.findMany({ where: { messageId: hello?.id }, orderBy: { reactedAt: 'asc' } });
    expect(reactions.map((r) => [r.reactor, r.emoji, r.reactedAt.getTime() / 1000])).toEqual([
      [jid(ana), '❤️', now - 5 * DAY + 60],
      [jid(me), '👍', now - 5 * DAY + 120],
    ]);

    // A chunk's reactions are applied together, as one after another would be: each reactor's last on a
    // message counts, an empty one takes it back, one on a message the store lacks changes nothing.
    const store = app.deps.received as MessageStore;
    // as the phone's were: by LID (the reactor's key)
    const lidOf = new Map(reactions.map((r) => [r.reactor, r.reactorLid]));
    const reactionOf = (from: string, target: string, emoji: string, at: number, fromMe = false) =>
      ({
        messageId: `R-${from}-${target}-${at}`,
        chatId: jid(ana),
        chatLid: null,
        from: jid(from),
        fromLid: lidOf.get(jid(from)) ?? null,
        fromMe,
        type: 'reaction',
        content: emoji,
        refersTo: target,
        messageTimestamp: at,
        key: { remoteJid: jid(ana), id: `R-${from}-${target}-${at}`, fromMe },
      }) as ReceivedMessage;
    const at5 = now - 5 * DAY;
    expect(
      await store.applyHistoryChanges(sessionId, [
        reactionOf(ana, `${p}-ANA-1`, '🔥', at5 + 300),
        reactionOf(ana, `${p}-ANA-1`, '😂', at5 + 200),
        reactionOf(me, `${p}-ANA-1`, '', at5 + 400, true),
        reactionOf(ben, `${p}-ANA-2`, '👏', at5 + 500),
        reactionOf(ben, `${p}-NOT-STORED`, '👏', at5 + 500),
      ]),
    ).toBe(5);
    // and a reaction older than the reactor's current one, arriving late, changes nothing
    await store.applyHistoryChanges(sessionId, [reactionOf(ana, `${p}-ANA-1`, '😢', at5 + 250)]);
    const reacted = await app.db.messageReaction.findMany({
      where: { message: { sessionId } },
      include: { message: true },
      orderBy: { reactedAt: 'asc' },
    });
    expect(reacted.map((r) => [r.message.waMessageId, r.reactor, r.emoji, r.reactedAt.getTime() / 1000])).toEqual([
      [`${p}-ANA-1`, jid(ana), '🔥', at5 + 300],
      [`${p}-ANA-2`, jid(ben), '👏', at5 + 500],
    ]);

    // Push names keyed by LID name a chat known by its LID, when it has no name.
    const benChat = chats.find((c) => c.chatId === jid(ben));
    expect(benChat?.chatLid).toMatch(/@lid$/);
    await app.db.chat.updateMany({ where: { sessionId, chatId: jid(ben) }, data: { name: null } });
    await (app.deps.received as MessageStore).historyNames(sessionId, [{ jid: benChat?.chatLid ?? '', name: 'Ben by LID' }]);
    expect((await app.db.chat.findFirst({ where: { sessionId, chatId: jid(ben) } }))?.name).toBe('Ben by LID');
    // A chunk's names in one write: the first for a chat wins, and a chat with a name keeps it.
    await app.db.chat.updateMany({ where: { sessionId, chatId: { in: [jid(ana), jid(cy)] } }, data: { name: null } });
    await (app.deps.received as MessageStore).historyNames(sessionId, [
      { jid: jid(ana), name: 'Ana first' },
      { jid: jid(ana), name: 'Ana second' },
      { jid: jid(ben), name: 'Ben again' },
      { jid: jid(cy), name: 'Cy' },
    ]);
    const named = await app.db.chat.findMany({ where: { sessionId }, orderBy: { chatId: 'asc' } });
    expect(named.map((c) => c.name)).toEqual(['Ana first', 'Ben by LID', 'Cy']);

    // The archive, pin and mute a chunk carries for its chats, by JID or by LID, each setting in one write.
    const changed = await chatStatesFromHistory(app.deps, sessionId, [
      { chatJid: jid(ana), chatLid: null, archived: true, pinned: false },
      { chatJid: 'nobody@s.whatsapp.net', chatLid: benChat?.chatLid ?? null, archived: true, pinned: false },
      { chatJid: jid(cy), chatLid: null, muted: true },
    ]);
    expect(changed).toBe(3);
    // A chunk may name thousands of chats: more than one statement's parameters take.
    const many = Array.from({ length: 1_500 }, (_, i) => ({ chatJid: `1555${i}@s.whatsapp.net`, chatLid: `9${i}@lid`, archived: true }));
    expect(await chatStatesFromHistory(app.deps, sessionId, [...many, { chatJid: jid(cy), chatLid: null, archived: true }])).toBe(1);
    await chatStatesFromHistory(app.deps, sessionId, [{ chatJid: jid(cy), chatLid: null, archived: false }]);
    // Named again as they are (a later chunk), they change nothing and are not pushed again.
    expect(await chatStatesFromHistory(app.deps, sessionId, [{ chatJid: jid(ana), chatLid: null, archived: true, pinned: false }])).toBe(0);
    const states = await app.db.chat.findMany({ where: { sessionId }, orderBy: { chatId: 'asc' } });
    expect(states.map((c) => [c.chatId, c.archived, c.pinned, c.muted])).toEqual([
      [jid(ana), true, false, false],
      [jid(ben), true, false, false],
      [jid(cy), false, false, true],
    ]);

    // The same message handed over again (a chunk resent after a restart) makes no second row.
    const stored = await (app.deps.received as MessageStore).storeHistory(sessionId, [
      {
        messageId: `${p}-ANA-1`,
        chatId: jid(ana),
        chatLid: null,
        from: jid(ana),
        fromLid: null,
        fromMe: false,
        type: 'text',
        text: 'hello',
        content: 'hello',
        messageTimestamp: now - 5 * DAY,
        key: { remoteJid: jid(ana), id: `${p}-ANA-1`, fromMe: false },
      } as ReceivedMessage,
    ]);
    expect(stored).toBe(0);
    expect(await app.db.message.count({ where: { sessionId, waMessageId: `${p}-ANA-1` } })).toBe(1);
  }, 60_000);

  it('HISTORY_SYNC_DAYS leaves older messages out, and 0 turns history off', async () => {
    const week = await linkWithHistory({ HISTORY_SYNC_DAYS: 7 });
    await waitUntil(
      async () => eventsOf(week.sessionId, 'history.synced'),
      (e) => e.length >= 3,
      20_000,
    );
    const kept = await week.app.db.message.findMany({ where: { sessionId: week.sessionId }, select: { waMessageId: true } });
    expect(kept.map((m) => m.waMessageId).sort()).toEqual([`${week.p}-ANA-1`, `${week.p}-ANA-2`, `${week.p}-BEN-1`]);
    expect(eventsOf(week.sessionId, 'history.synced').reduce((n, e) => n + Number(e.skipped), 0)).toBe(1);

    const off = await linkWithHistory({ HISTORY_SYNC_DAYS: 0 });
    // The phone sends its chunks at link, the push names last; a live message after them is stored, and
    // nothing from history is. (Waiting for the last chunk first: the link can be up before it went.)
    await waitUntil(
      async () => sandbox.control.historySent(off.me).map((c) => c.syncType),
      (types) => types.includes('PUSH_NAME'),
      20_000,
    );
    const sent = await sandbox.control.sendText(off.ana, off.me, 'after the link');
    await waitUntil(
      () => off.app.db.message.findMany({ where: { sessionId: off.sessionId } }),
      (rows) => rows.some((r) => r.waMessageId === sent.id),
    );
    expect((await off.app.db.message.findMany({ where: { sessionId: off.sessionId } })).map((r) => r.source)).toEqual(['live']);
    expect(eventsOf(off.sessionId, 'history.synced')).toEqual([]);

    // Asked for explicitly, a chat's older messages still come, however old (the days cut only the sync at link).
    const asked = await http(off.app.baseUrl, 'POST', `/v1/sessions/${off.sessionId}/chats/${off.ana}/history`, {
      key: off.key,
      body: { count: 10 },
    });
    expect(asked.status).toBe(200);
    const onDemand = await waitUntil(
      async () => eventsOf(off.sessionId, 'history.synced'),
      (e) => e.length > 0,
      20_000,
    );
    expect(onDemand.map((e) => [e.syncType, e.messages, e.stored, e.changes, e.skipped])).toEqual([['on_demand', 3, 3, 2, 0]]);
    const fetched = await off.app.db.message.findMany({
      where: { sessionId: off.sessionId, source: 'history' },
      orderBy: { messageTimestamp: 'asc' },
    });
    expect(fetched.map((r) => r.waMessageId)).toEqual([`${off.p}-ANA-OLD`, `${off.p}-ANA-1`, `${off.p}-ANA-2`]);
  }, 90_000);

  it('fetches older messages of one chat on demand (REST)', async () => {
    const { app, key, sessionId, ana, p } = await linkWithHistory({ HISTORY_SYNC_DAYS: 365 });
    await waitUntil(
      async () => eventsOf(sessionId, 'history.synced'),
      (e) => e.some((x) => x.syncType === 'push_name'),
      20_000,
    );
    // 200 days is past the phone's recent window: not in the link's sync
    expect(await app.db.message.count({ where: { sessionId, waMessageId: `${p}-ANA-OLD` } })).toBe(0);
    const asked = await http(app.baseUrl, 'POST', `/v1/sessions/${sessionId}/chats/${ana}/history`, { key, body: { count: 10 } });
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ ok: true, chatId: jid(ana), count: 10, before: `${p}-ANA-1` });
    const onDemand = await waitUntil(
      async () => eventsOf(sessionId, 'history.synced').find((e) => e.syncType === 'on_demand'),
      (e) => e !== undefined,
      20_000,
    );
    expect(onDemand).toMatchObject({ requestId: (asked.body as Json).requestId, messages: 1, stored: 1 });
    const old = await app.db.message.findUnique({ where: { sessionId_waMessageId: { sessionId, waMessageId: `${p}-ANA-OLD` } } });
    expect(old).toMatchObject({ source: 'history', text: 'long ago', chatId: jid(ana) });
    const none = await http(app.baseUrl, 'POST', `/v1/sessions/${sessionId}/chats/15550000000/history`, { key, body: {} });
    expect(none.status).toBe(404);
    const bad = await http(app.baseUrl, 'POST', `/v1/sessions/${sessionId}/chats/${ana}/history`, { key, body: { count: 0 } });
    expect(bad.status).toBe(400);
  }, 60_000);

  it('notes each chunk the link takes until it is stored, and reports one an earlier process left, once, when the link is next up', async () => {
    const { app, key, sessionId } = await linkWithHistory();
    await waitUntil(
      async () => eventsOf(sessionId, 'history.synced'),
      (e) => e.some((x) => x.syncType === 'push_name'),
      20_000,
    );
    // Every chunk the link took was stored: nothing is left noted.
    const pending = async () => (await app.db.session.findUnique({ where: { id: sessionId } }))?.historyPending;
    await waitUntil(pending, (p) => p === null);
    expect(eventsOf(sessionId, 'history.interrupted')).toEqual([]);

    // What a process that stopped between a chunk's receipt and its storing leaves (another process's mark).
    const takenAt = '2026-11-29T10:00:00.000Z';
    await app.db.session.update({ where: { id: sessionId }, data: { historyPending: `earlier-process recent 7 ${takenAt}` } });
    expect((await http(app.baseUrl, 'POST', `/v1/sessions/${sessionId}/disconnect`, { key })).body.status).toBe('DISCONNECTED');
    expect((await http(app.baseUrl, 'POST', `/v1/sessions/${sessionId}/connect`, { key })).status).toBe(200);
    const reported = await waitUntil(
      async () => eventsOf(sessionId, 'history.interrupted'),
      (e) => e.length > 0,
      20_000,
    );
    expect(reported).toEqual([{ sessionId, syncType: 'recent', chunkOrder: 7, takenAt }]);
    // Forgotten once reported: a later link-up has nothing to report.
    expect(await pending()).toBeNull();
  }, 60_000);

  it("runs the account's first app state sync at the next start when the service stopped right after linking", async () => {
    // The phone archived Ana's chat before the link; the server is slow to answer the new device's first
    // app state fetch, and the service stops meanwhile. (Baileys holds the link's key store while it
    // syncs, so the link may not even have reported CONNECTED.)
    const linked = await linkWithHistory(
      {},
      async (phones) => {
        await sandbox.control.chatAction(phones.me, phones.ana, { archive: true });
        sandbox.control.holdAppState(phones.me);
      },
      { connected: false },
    );
    const { sessionId, me, ana } = linked;
    // Baileys took the history notification (noted in its credentials) and is fetching app state.
    await waitUntil(
      async () => (await linked.app.db.sessionAuth.findFirst({ where: { sessionId, type: 'creds' } }))?.value ?? '{}',
      (value) => (JSON.parse(value).processedHistoryMessages?.length ?? 0) > 0,
      20_000,
    );
    const entry = apps.find((a) => a.app === linked.app);
    if (!entry) throw new Error('the app is not in the list');
    await linked.app.close();
    // The history chunk waited behind the sync and was lost with the stop (reported at the start of the
    // next process: here one process runs both services); Ana's chat has a row from elsewhere (a live
    // message, a later chunk).
    sandbox.control.holdAppState(me, false);
    entry.app = await startTestApp(
      kind,
      { WEBHOOK_ALLOW_PRIVATE: true },
      { target: { sandbox: sandboxAddress(sandbox) } },
      { existing: entry.database },
    );
    await entry.app.db.chat.create({
      data: {
        sessionId,
        chatId: jid(ana),
        chatLid: sandbox.control.phone(ana).lid,
        kind: 'person',
        lastMessageId: 'LIVE-1',
        lastMessageAt: new Date(),
      },
    });
    await entry.app.deps.sessions.resumeAll();
    // Started again, the session links; Baileys waits 20 s for a history notification, none comes again,
    // and it counts the sync done without running it; the session runs it then: Ana's chat is archived.
    const chat = () => entry.app.db.chat.findFirst({ where: { sessionId, chatId: jid(ana) } });
    const archived = await waitUntil(chat, (c) => c?.archived === true, 40_000);
    expect(archived?.archived).toBe(true);
  }, 90_000);

  it('refuses a history blob over HISTORY_MAX_BYTES; the session stays CONNECTED and stores none of it', async () => {
    const { app, key, sessionId, ana, me } = await linkWithHistory({ HISTORY_SYNC_DAYS: 90, HISTORY_MAX_BYTES: 10 });
    await waitUntil(
      async () => sandbox.control.historySent(me),
      (sent) => sent.some((c) => c.syncType === 'PUSH_NAME'),
    );
    const sent = await sandbox.control.sendText(ana, me, 'still here');
    await waitUntil(
      () => app.db.message.findMany({ where: { sessionId } }),
      (rows) => rows.some((r) => r.waMessageId === sent.id),
    );
    expect((await app.db.message.findMany({ where: { sessionId } })).map((r) => r.source)).toEqual(['live']);
    expect(eventsOf(sessionId, 'history.synced')).toEqual([]);
    const status = await http(app.baseUrl, 'GET', `/v1/sessions/${sessionId}/status`, { key });
    expect((status.body as Json).status).toBe('CONNECTED');
  }, 60_000);
});
