import type { WAMessage } from 'baileys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { startSandbox, trustSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import type { TestSocket } from './helpers.ts';
import { linkedSocket, waitFor } from './helpers.ts';

describe('sandbox: 1:1 messages with real Signal encryption', () => {
  let sandbox: Sandbox;
  let alice: TestSocket;
  const received: WAMessage[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox();
    trustSandbox(sandbox.rootPublicKey);
    alice = await linkedSocket(sandbox, '15552220001');
    alice.sock.ev.on('messages.upsert', ({ messages }) => received.push(...messages));
    sandbox.control.addPhone('15552220002', 'Bob');
  });
  afterAll(async () => {
    alice?.sock.end(undefined);
    await sandbox?.close();
  });

  it('a virtual phone decrypts a text a companion sent, once per message id', async () => {
    const sent = await alice.sock.sendMessage('15552220002@s.whatsapp.net', { text: 'hello Bob' });
    const entry = await waitFor(() => sandbox.control.inbox('15552220002').find((e) => e.id === sent?.key.id));
    expect(entry).toMatchObject({ kind: 'text', content: 'hello Bob', from: '15552220001@s.whatsapp.net', duplicates: 0 });
    const second = await alice.sock.sendMessage('15552220002@s.whatsapp.net', { text: 'second' });
    await waitFor(() => sandbox.control.inbox('15552220002').find((e) => e.id === second?.key.id));
    expect(sandbox.control.inbox('15552220002').map((e) => e.content)).toEqual(['hello Bob', 'second']);
  });

  it('numbers the directory does not know are not on WhatsApp', async () => {
    const result = await alice.sock.onWhatsApp('15552220002', '19998887777');
    expect(result?.find((r) => r.jid.startsWith('15552220002'))?.exists).toBe(true);
    expect(result?.some((r) => r.jid.startsWith('19998887777') && r.exists)).toBe(false);
  });

  it('a virtual phone sends a text that Baileys decrypts', async () => {
    const { id } = await sandbox.control.sendText('15552220002', '15552220001', 'hi Alice');
    const msg = await waitFor(() => received.find((m) => m.key.id === id));
    expect(msg.message?.conversation).toBe('hi Alice');
    expect(msg.key.fromMe).toBe(false);
    const again = await sandbox.control.sendText('15552220002', '15552220001', 'and again');
    expect((await waitFor(() => received.find((m) => m.key.id === again.id))).message?.conversation).toBe('and again');
  });

  it('delivers an edit the phone applies to the original message', async () => {
    const sent = await alice.sock.sendMessage('15552220002@s.whatsapp.net', { text: 'typo' });
    await waitFor(() => sandbox.control.inbox('15552220002').find((e) => e.id === sent?.key.id));
    await alice.sock.sendMessage('15552220002@s.whatsapp.net', { text: 'fixed', edit: sent?.key });
    await waitFor(() => sandbox.control.inbox('15552220002').find((e) => e.kind === 'edit'));
    expect(sandbox.control.inbox('15552220002').find((e) => e.id === sent?.key.id)?.content).toBe('fixed');
  });
});
