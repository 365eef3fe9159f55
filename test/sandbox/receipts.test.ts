import { proto } from 'baileys';
import type { WAMessageKey } from 'baileys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { startSandbox, trustSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import type { TestSocket } from './helpers.ts';
import { linkedSocket, waitFor } from './helpers.ts';

const { DELIVERY_ACK, READ, PLAYED } = proto.WebMessageInfo.Status;

describe.each(['lid', 'pn'] as const)('sandbox: delivery, read and played receipts from the phones (%s addressing)', (addressing) => {
  let sandbox: Sandbox;
  let owner: TestSocket;
  // Baileys reports a receipt as `messages.update` (1:1) or `message-receipt.update` (groups), or, when
  // it arrives while the sent message's own upsert is still buffered, merged into that upsert.
  const updates: Array<{ key: WAMessageKey; status?: number | null }> = [];
  const groupReceipts: Array<{ key: WAMessageKey; receipt: proto.IUserReceipt }> = [];
  const statusesOf = (id: string | null | undefined) => updates.filter((u) => u.key.id === id && u.key.fromMe).map((u) => u.status);

  beforeAll(async () => {
    sandbox = await startSandbox({ addressing });
    trustSandbox(sandbox.rootPublicKey);
    owner = await linkedSocket(sandbox, '15557880001');
    owner.sock.ev.on('messages.update', (u) => updates.push(...u.map(({ key, update }) => ({ key, status: update.status }))));
    owner.sock.ev.on('message-receipt.update', (u) => groupReceipts.push(...u));
    owner.sock.ev.on('messages.upsert', ({ messages }) => {
      for (const m of messages) {
        updates.push({ key: m.key, status: m.status });
        for (const receipt of m.userReceipt ?? []) groupReceipts.push({ key: m.key, receipt });
      }
    });
    sandbox.control.addPhone('15557880002', 'Jo');
    sandbox.control.addPhone('15557880003', 'Kim');
    sandbox.control.addPhone('15557880004', 'Lou');
  });
  afterAll(async () => {
    owner?.sock.end(undefined);
    await sandbox?.close();
  });

  it('a phone that decrypts a message acknowledges it; reading it on demand sends a read receipt', async () => {
    const sent = await owner.sock.sendMessage('15557880002@s.whatsapp.net', { text: 'did you get this?' });
    await waitFor(() => statusesOf(sent?.key.id).includes(DELIVERY_ACK));
    expect(updates.find((u) => u.key.id === sent?.key.id)?.key.remoteJid).toBe('15557880002@s.whatsapp.net');
    expect(statusesOf(sent?.key.id)).not.toContain(READ);

    const second = await owner.sock.sendMessage('15557880002@s.whatsapp.net', { text: 'and this?' });
    await waitFor(() => statusesOf(second?.key.id).includes(DELIVERY_ACK));
    // Reading the whole chat batches both ids into one receipt (id plus a list of items).
    expect(sandbox.control.read('15557880002', { chat: '15557880001' })).toEqual({ ids: [sent?.key.id, second?.key.id], receipts: 1 });
    await waitFor(() => statusesOf(sent?.key.id).includes(READ) && statusesOf(second?.key.id).includes(READ));
    expect(sandbox.control.inbox('15557880002').every((e) => e.readAt)).toBe(true);
  });

  it('a voice note played on demand gets a played receipt; a text cannot be played', async () => {
    const voice = await owner.sock.sendMessage('15557880002@s.whatsapp.net', {
      audio: Buffer.from('OggS fake voice'),
      ptt: true,
      mimetype: 'audio/ogg; codecs=opus',
    });
    await waitFor(() => statusesOf(voice?.key.id).includes(DELIVERY_ACK));
    expect(sandbox.control.inbox('15557880002').find((e) => e.id === voice?.key.id)?.kind).toBe('voice');
    sandbox.control.play('15557880002', [voice?.key.id ?? '']);
    await waitFor(() => statusesOf(voice?.key.id).includes(PLAYED));
    const text = sandbox.control.inbox('15557880002').find((e) => e.kind === 'text');
    expect(() => sandbox.control.play('15557880002', [text?.id ?? ''])).toThrow(/no voice note/);
    expect(() => sandbox.control.read('15557880002', { ids: ['NOT-RECEIVED'] })).toThrow(/did not receive NOT-RECEIVED/);
  });

  it('in a group each member phone sends its own receipts, naming itself as participant', async () => {
    const group = await owner.sock.groupCreate(
      'Receipts',
      ['15557880002', '15557880003', '15557880004'].map((n) => `${n}@s.whatsapp.net`),
    );
    const sent = await owner.sock.sendMessage(group.id, { text: 'hello all' });
    const delivered = () =>
      groupReceipts
        .filter((r) => r.key.id === sent?.key.id && r.receipt.receiptTimestamp)
        .map((r) => r.receipt.userJid)
        .sort();
    // A member names itself as the group does: by LID on a lid network, by phone number on a pn one.
    const named = (number: string) => {
      const phone = sandbox.control.phone(number);
      return addressing === 'lid' ? phone.lid : phone.jid;
    };
    await waitFor(() => delivered().length === 3);
    expect(delivered()).toEqual(['15557880002', '15557880003', '15557880004'].map(named).sort());
    expect(groupReceipts.find((r) => r.key.id === sent?.key.id)?.key.remoteJid).toBe(group.id);
    sandbox.control.read('15557880003', { ids: [sent?.key.id ?? ''] });
    await waitFor(() => groupReceipts.find((r) => r.key.id === sent?.key.id && r.receipt.readTimestamp));
    expect(groupReceipts.filter((r) => r.key.id === sent?.key.id && r.receipt.readTimestamp).map((r) => r.receipt.userJid)).toEqual([
      named('15557880003'),
    ]);
  });
});
