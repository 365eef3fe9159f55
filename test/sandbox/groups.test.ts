import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { startSandbox, trustSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import type { TestSocket } from './helpers.ts';
import { linkedSocket, waitFor } from './helpers.ts';

describe.each(['lid', 'pn'] as const)('sandbox: groups, statuses and channels (%s addressing)', (addressing) => {
  let sandbox: Sandbox;
  let owner: TestSocket;
  // A member as the group names it: by LID on a lid network, by phone number on a pn one.
  const named = (number: string) => {
    const phone = sandbox.control.phone(number);
    return addressing === 'lid' ? phone.lid : phone.jid;
  };
  beforeAll(async () => {
    sandbox = await startSandbox({ addressing });
    trustSandbox(sandbox.rootPublicKey);
    owner = await linkedSocket(sandbox, '15557770001');
    sandbox.control.addPhone('15557770002', 'Gina');
    sandbox.control.addPhone('15557770003', 'Hugo');
    sandbox.control.addPhone('15557770004', 'Ivy');
  });
  afterAll(async () => {
    owner?.sock.end(undefined);
    await sandbox?.close();
  });

  it('creates a group of three whose sends every member phone decrypts', async () => {
    const group = await owner.sock.groupCreate('Team', ['15557770002@s.whatsapp.net', '15557770003@s.whatsapp.net']);
    expect(group.id).toMatch(/@g\.us$/);
    expect(group.addressingMode).toBe(addressing);
    expect(group.participants.map((p) => p.id).sort()).toEqual(['15557770001', '15557770002', '15557770003'].map(named).sort());
    const first = await owner.sock.sendMessage(group.id, { text: 'hello team' });
    const second = await owner.sock.sendMessage(group.id, { text: 'second round' });
    for (const n of ['15557770002', '15557770003']) {
      await waitFor(() => sandbox.control.inbox(n).find((e) => e.id === second?.key.id));
      expect(
        sandbox.control
          .inbox(n)
          .filter((e) => e.chat === group.id)
          .map((e) => e.content),
      ).toEqual(['hello team', 'second round']);
    }
    expect(sandbox.control.inbox('15557770002').find((e) => e.id === first?.key.id)?.from).toBe('15557770001@s.whatsapp.net');
  });

  it('manages subject, description, participants, invite codes, admin-only and leave', async () => {
    const group = await owner.sock.groupCreate('Ops', ['15557770002@s.whatsapp.net']);
    await owner.sock.groupUpdateSubject(group.id, 'Ops 2');
    await owner.sock.groupUpdateDescription(group.id, 'on call');
    const added = await owner.sock.groupParticipantsUpdate(group.id, ['15557770004@s.whatsapp.net'], 'add');
    expect(added).toEqual([expect.objectContaining({ status: '200', jid: named('15557770004') })]);
    await owner.sock.groupParticipantsUpdate(group.id, ['15557770002@s.whatsapp.net'], 'promote');
    await owner.sock.groupSettingUpdate(group.id, 'announcement');
    const meta = await owner.sock.groupMetadata(group.id);
    expect(meta).toMatchObject({ subject: 'Ops 2', desc: 'on call', announce: true });
    expect(meta.participants.find((p) => p.id === named('15557770002'))?.admin).toBe('admin');
    const code = await owner.sock.groupInviteCode(group.id);
    expect(code).toMatch(/^[\w-]{10,}$/);
    await owner.sock.groupParticipantsUpdate(group.id, ['15557770004@s.whatsapp.net'], 'remove');
    expect(sandbox.control.group(group.id)?.participants.map((p) => p.jid)).not.toContain('15557770004@s.whatsapp.net');
    await owner.sock.groupLeave(group.id);
    expect(sandbox.control.group(group.id)?.participants.map((p) => p.jid)).toEqual(['15557770002@s.whatsapp.net']);
    await expect(owner.sock.groupLeave(group.id)).rejects.toThrow('item-not-found');
    await expect(owner.sock.groupLeave('999999999@g.us')).rejects.toThrow('item-not-found');
    expect(sandbox.control.group(group.id)?.participants.map((p) => p.jid)).toEqual(['15557770002@s.whatsapp.net']);
  });

  it('publishes a status that exactly the listed phones decrypt', async () => {
    const sent = await owner.sock.sendMessage(
      'status@broadcast',
      { text: 'my status' },
      { statusJidList: ['15557770002@s.whatsapp.net', '15557770003@s.whatsapp.net'], broadcast: true },
    );
    for (const n of ['15557770002', '15557770003']) {
      const entry = await waitFor(() => sandbox.control.inbox(n).find((e) => e.id === sent?.key.id));
      expect(entry).toMatchObject({ chat: 'status@broadcast', content: 'my status' });
    }
    expect(sandbox.control.inbox('15557770004').some((e) => e.id === sent?.key.id)).toBe(false);
  });

  it('receives a channel post in plaintext', async () => {
    await owner.sock.sendMessage('120363000000000001@newsletter', { text: 'news!' });
    const posts = await waitFor(() => sandbox.control.channel('120363000000000001@newsletter').at(0));
    expect(posts).toMatchObject({ kind: 'text', content: 'news!', from: '15557770001@s.whatsapp.net' });
  });
});
