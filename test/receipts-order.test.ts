import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordReceipts } from '../src/resolvers/receipts.ts';
import type { SessionReceipt } from '../src/resolvers/receipts.ts';
import type { Receipt } from '../src/runtime/ports/network.ts';
import type { TestApp } from './helpers/app.ts';
import { dbKinds, http, startTestApp } from './helpers/app.ts';

const GROUP = '120363000000000001@g.us';
const at = (s: number) => Date.UTC(2026, 10, 23, 12, 0, s);

/** Receipts straight into the recorder, in orders the network may produce, without a network. */
describe.each(dbKinds)('recording receipts out of order and twice (%s)', (kind) => {
  let app: TestApp;
  let sessionId: string;
  let accountId: string;
  let n = 0;
  const record = async (to: string) => {
    n += 1;
    const row = await app.db.outgoingMessage.create({
      data: { accountId, sessionId, toNumber: to, content: 'x', status: 'SENT', waMessageId: `WA${n}`, remoteJid: to },
    });
    return row;
  };
  const write = (...receipts: Array<Omit<Receipt, 'at'> & { at: number }>) =>
    recordReceipts(
      app.deps,
      receipts.map((receipt): SessionReceipt => ({ sessionId, receipt })),
    );
  const times = (id: string) =>
    app.db.outgoingMessage.findUniqueOrThrow({ where: { id }, select: { deliveredAt: true, readAt: true, playedAt: true } });

  beforeAll(async () => {
    app = await startTestApp(kind);
    const account = await app.newAccount();
    accountId = account.id;
    sessionId = (await http(app.baseUrl, 'POST', '/v1/sessions', { key: account.apiKey, body: { name: 'r' } })).body.id;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a read before its delivery receipt sets both; the late delivery receipt and a repeated read change nothing', async () => {
    const msg = await record('15550009999@s.whatsapp.net');
    const base = { waMessageId: msg.waMessageId ?? '', chatJid: msg.toNumber, recipient: msg.toNumber };
    await write({ ...base, kind: 'read', at: at(5) });
    const afterRead = await times(msg.id);
    expect(afterRead).toEqual({ deliveredAt: new Date(at(5)), readAt: new Date(at(5)), playedAt: null });
    await write({ ...base, kind: 'delivered', at: at(3) }, { ...base, kind: 'read', at: at(9) });
    expect(await times(msg.id)).toEqual(afterRead);
  });

  it('in one batch, the first receipt of each kind wins; played implies read and delivered', async () => {
    const msg = await record('15550009998@s.whatsapp.net');
    const base = { waMessageId: msg.waMessageId ?? '', chatJid: msg.toNumber, recipient: msg.toNumber };
    await write(
      { ...base, kind: 'delivered', at: at(1) },
      { ...base, kind: 'delivered', at: at(2) },
      { ...base, kind: 'played', at: at(4) },
    );
    expect(await times(msg.id)).toEqual({ deliveredAt: new Date(at(1)), readAt: new Date(at(4)), playedAt: new Date(at(4)) });
  });

  it('group members get one row each; the message keeps the first member times; unknown ids are ignored', async () => {
    const msg = await record(GROUP);
    const member = (user: string, kind: Receipt['kind'], s: number) => ({
      waMessageId: msg.waMessageId ?? '',
      chatJid: GROUP,
      recipient: `${user}@s.whatsapp.net`,
      kind,
      at: at(s),
    });
    await write(member('1', 'delivered', 1), member('2', 'delivered', 2), { ...member('3', 'delivered', 3), waMessageId: 'UNKNOWN' });
    await write(member('2', 'read', 6), member('1', 'delivered', 7), member('3', 'read', 8));
    await write(member('2', 'read', 9));
    const rows = await app.db.messageReceipt.findMany({ where: { messageId: msg.id }, orderBy: { recipient: 'asc' } });
    expect(rows.map(({ recipient, deliveredAt, readAt }) => ({ recipient, deliveredAt, readAt }))).toEqual([
      { recipient: '1@s.whatsapp.net', deliveredAt: new Date(at(1)), readAt: null },
      { recipient: '2@s.whatsapp.net', deliveredAt: new Date(at(2)), readAt: new Date(at(6)) },
      { recipient: '3@s.whatsapp.net', deliveredAt: new Date(at(8)), readAt: new Date(at(8)) },
    ]);
    expect(await times(msg.id)).toEqual({ deliveredAt: new Date(at(1)), readAt: new Date(at(6)), playedAt: null });
  });
});
