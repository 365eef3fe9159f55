import type { WAMessage } from 'baileys';
import { describe, expect, it } from 'vitest';
import { mediaOf, toIncoming } from '../../src/runtime/network/baileys-incoming.ts';
import type { LidBook } from '../../src/runtime/network/baileys-lids.ts';
import { IncomingMediaStore } from '../../src/runtime/incoming-media.ts';
import type { Db } from '../../src/runtime/db/client.ts';
import { pino } from 'pino';

const OWN = { jid: '15550001000:7@s.whatsapp.net', lid: '77770001000:7@lid' };
const message = (key: WAMessage['key'], text = 'hi'): WAMessage => ({
  key,
  message: { conversation: text },
  pushName: 'Someone',
  messageTimestamp: 1_700_000_000,
});
/** A mapping store holding one person: 15550004000 ↔ 66660004000. */
const book: LidBook = {
  pnForLid: async (lid) => (lid.startsWith('66660004000') ? '15550004000@s.whatsapp.net' : null),
  lidForPn: async (pn) => (pn.startsWith('15550004000') ? '66660004000@lid' : null),
};

describe('incoming items from network messages', () => {
  it('gives a message of our own (fromMe) the session JID as from and its LID as fromLid, in a chat and in a group', async () => {
    expect(await toIncoming(message({ remoteJid: '15550002000@s.whatsapp.net', fromMe: true, id: 'A' }), OWN)).toEqual({
      chatId: '15550002000@s.whatsapp.net',
      chatLid: null,
      from: '15550001000@s.whatsapp.net',
      fromLid: '77770001000@lid',
      fromMe: true,
      type: 'text',
      content: 'hi',
      pushName: 'Someone',
      messageTimestamp: 1_700_000_000,
      messageId: 'A',
      // what a reaction or a quote of it needs: the key as the network addressed it, and the message
      key: { remoteJid: '15550002000@s.whatsapp.net', fromMe: true, id: 'A' },
      quotable: Buffer.from([0x0a, 0x02, 0x68, 0x69]).toString('base64'),
      // the message store's text (the buffer item and the webhooks leave it out)
      text: 'hi',
    });
    const inGroup = await toIncoming(
      message({ remoteJid: '120363000000000001@g.us', fromMe: true, id: 'B', participant: '99990000111@lid' }),
      OWN,
    );
    expect(inGroup).toMatchObject({ chatId: '120363000000000001@g.us', chatLid: null, from: '15550001000@s.whatsapp.net', fromMe: true });
  });

  it("hands the store a message's text or caption (none for a file without one), the id it quotes and the people it mentions", async () => {
    const key = { remoteJid: '15550002000@s.whatsapp.net', fromMe: false, id: 'Q' };
    const reply = await toIncoming(
      {
        key,
        message: {
          extendedTextMessage: {
            text: '@15550001000 yes',
            contextInfo: { stanzaId: 'ORIGINAL', participant: key.remoteJid, mentionedJid: ['15550001000@s.whatsapp.net'] },
          },
        },
        messageTimestamp: 1_700_000_000,
      },
      OWN,
    );
    expect(reply).toMatchObject({ text: '@15550001000 yes', quotedId: 'ORIGINAL', mentions: ['15550001000@s.whatsapp.net'] });
    const file = { url: 'https://mmg.example/x', directPath: '/x', mediaKey: new Uint8Array(32).fill(1), mimetype: 'image/jpeg' };
    const captioned = await toIncoming({ key, message: { imageMessage: { ...file, caption: 'the view' } }, messageTimestamp: 1 }, OWN);
    expect(captioned).toMatchObject({ type: 'image', content: 'the view', text: 'the view' });
    const bare = await toIncoming({ key, message: { imageMessage: file } }, OWN);
    expect(bare).toMatchObject({ type: 'image', content: '[image]' });
    expect(bare?.text).toBeUndefined();
    expect(bare?.quotedId).toBeUndefined();
    expect(bare?.mentions).toBeUndefined();
  });

  it('gives others their phone-number JID when Baileys addresses them by LID, and the LID beside it', async () => {
    expect(await toIncoming(message({ remoteJid: '15550002000@s.whatsapp.net', fromMe: false, id: 'C' }), OWN)).toMatchObject({
      from: '15550002000@s.whatsapp.net',
      fromLid: null,
      fromMe: false,
    });
    const lid = await toIncoming(
      message({
        remoteJid: '120363000000000001@g.us',
        fromMe: false,
        id: 'D',
        participant: '88880000222:3@lid',
        participantAlt: '15550003000@s.whatsapp.net',
      }),
      OWN,
    );
    expect(lid).toMatchObject({ chatId: '120363000000000001@g.us', from: '15550003000@s.whatsapp.net', fromLid: '88880000222@lid' });
    const direct = await toIncoming(
      message({ remoteJid: '88880000333@lid', remoteJidAlt: '15550003333@s.whatsapp.net', fromMe: false, id: 'E' }),
      OWN,
    );
    expect(direct).toMatchObject({
      chatId: '15550003333@s.whatsapp.net',
      chatLid: '88880000333@lid',
      from: '15550003333@s.whatsapp.net',
      fromLid: '88880000333@lid',
    });
  });

  it('finds the number of a LID-only sender in the mapping store, and shows the LID (not as a number) when nobody knows it', async () => {
    const known = await toIncoming(message({ remoteJid: '66660004000@lid', fromMe: false, id: 'F' }), OWN, book);
    expect(known).toMatchObject({ chatId: '15550004000@s.whatsapp.net', from: '15550004000@s.whatsapp.net', fromLid: '66660004000@lid' });
    const hidden = await toIncoming(message({ remoteJid: '55550005000@lid', fromMe: false, id: 'G' }), OWN, book);
    expect(hidden).toMatchObject({
      chatId: '55550005000@lid',
      chatLid: '55550005000@lid',
      from: '55550005000@lid',
      fromLid: '55550005000@lid',
    });
    // A phone-number sender whose LID the store knows gets it beside the number.
    const byNumber = await toIncoming(message({ remoteJid: '15550004000@s.whatsapp.net', fromMe: false, id: 'H' }), OWN, book);
    expect(byNumber).toMatchObject({ from: '15550004000@s.whatsapp.net', fromLid: '66660004000@lid' });
  });
});

describe('the media of received messages', () => {
  const key = new Uint8Array(32).fill(7);
  const keyB64 = Buffer.from(key).toString('base64');

  it('keeps what a later download needs, and names only documents', () => {
    expect(
      mediaOf({
        imageMessage: {
          mediaKey: key,
          directPath: '/m/1',
          url: 'https://mmg.example/m/1',
          mimetype: 'image/jpeg',
          fileLength: 42,
          caption: 'x',
        },
      }),
    ).toEqual({
      mediaType: 'image',
      mediaKey: keyB64,
      directPath: '/m/1',
      url: 'https://mmg.example/m/1',
      mimetype: 'image/jpeg',
      size: 42,
      fileName: null,
    });
    expect(
      mediaOf({
        documentWithCaptionMessage: {
          message: {
            documentMessage: { mediaKey: key, directPath: '/m/2', mimetype: 'application/pdf', fileLength: 9, fileName: 'a.pdf' },
          },
        },
      }),
    ).toMatchObject({ mediaType: 'document', fileName: 'a.pdf', size: 9 });
    expect(mediaOf({ audioMessage: { mediaKey: key, directPath: '/m/3', ptt: true } })).toMatchObject({
      mediaType: 'audio',
      mimetype: 'application/octet-stream',
      fileName: null,
    });
    expect(
      mediaOf({ viewOnceMessage: { message: { videoMessage: { mediaKey: key, url: 'https://mmg.example/m/4', mimetype: 'video/mp4' } } } }),
    ).toMatchObject({ mediaType: 'video', url: 'https://mmg.example/m/4' });
  });

  it('finds none in text, or in a file message without its key or location', () => {
    expect(mediaOf({ conversation: 'hi' })).toBeUndefined();
    expect(mediaOf({ imageMessage: { directPath: '/m/1' } })).toBeUndefined();
    expect(mediaOf({ imageMessage: { mediaKey: key } })).toBeUndefined();
  });

  it('builds path-relative URLs, or absolute ones under PUBLIC_URL', () => {
    const store = (publicUrl?: string) =>
      new IncomingMediaStore({
        db: {} as Db,
        provider: 'sqlite',
        logger: pino({ level: 'silent' }),
        now: () => new Date(),
        retentionMs: 1,
        publicUrl,
      });
    expect(store().url('s-1', '3EB0AB')).toBe('/v1/sessions/s-1/incoming/3EB0AB/media');
    expect(store('https://api.example.com/wa/').url('s-1', 'a/b')).toBe('https://api.example.com/wa/v1/sessions/s-1/incoming/a%2Fb/media');
  });
});
