import type { WAMessage } from 'baileys';
import { describe, expect, it } from 'vitest';
import { mediaOf, toIncoming } from '../../src/runtime/network/baileys-incoming.ts';
import { IncomingMediaStore } from '../../src/runtime/incoming-media.ts';
import type { Db } from '../../src/runtime/db/client.ts';
import { pino } from 'pino';

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
      messageId: 'A',
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
      new IncomingMediaStore({ db: {} as Db, logger: pino({ level: 'silent' }), now: () => new Date(), retentionMs: 1, publicUrl });
    expect(store().url('s-1', '3EB0AB')).toBe('/v1/sessions/s-1/incoming/3EB0AB/media');
    expect(store('https://api.example.com/wa/').url('s-1', 'a/b')).toBe('https://api.example.com/wa/v1/sessions/s-1/incoming/a%2Fb/media');
  });
});
