import type { WAMessage } from 'baileys';
import { describe, expect, it } from 'vitest';
import { toIncoming } from '../../src/runtime/network/baileys-incoming.ts';

const OWN = '15550001000:7@s.whatsapp.net';
const message = (key: WAMessage['key'], text = 'hi'): WAMessage => ({
  key,
  message: { conversation: text },
  pushName: 'Someone',
  messageTimestamp: 1_700_000_000,
});

describe('incoming items from network messages', () => {
  it('gives a message of our own (fromMe) the session JID as from, in a chat and in a group', () => {
    expect(toIncoming(message({ remoteJid: '15550002000@s.whatsapp.net', fromMe: true, id: 'A' }), OWN)).toEqual({
      chatId: '15550002000@s.whatsapp.net',
      from: '15550001000@s.whatsapp.net',
      fromMe: true,
      type: 'text',
      content: 'hi',
      pushName: 'Someone',
      messageTimestamp: 1_700_000_000,
    });
    const inGroup = toIncoming(
      message({ remoteJid: '120363000000000001@g.us', fromMe: true, id: 'B', participant: '99990000111@lid' }),
      OWN,
    );
    expect(inGroup).toMatchObject({ chatId: '120363000000000001@g.us', from: '15550001000@s.whatsapp.net', fromMe: true });
  });

  it('gives others their own JID, the phone-number form when Baileys addresses them by LID', () => {
    expect(toIncoming(message({ remoteJid: '15550002000@s.whatsapp.net', fromMe: false, id: 'C' }), OWN)).toMatchObject({
      from: '15550002000@s.whatsapp.net',
      fromMe: false,
    });
    const lid = toIncoming(
      message({
        remoteJid: '120363000000000001@g.us',
        fromMe: false,
        id: 'D',
        participant: '88880000222@lid',
        participantAlt: '15550003000@s.whatsapp.net',
      }),
      OWN,
    );
    expect(lid).toMatchObject({ chatId: '120363000000000001@g.us', from: '15550003000@s.whatsapp.net', fromMe: false });
  });
});
