import { createHash, randomBytes } from 'node:crypto';
import { downloadContentFromMessage } from 'baileys';
import type { WAMessage } from 'baileys';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { startSandbox, trustSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import type { TestSocket } from './helpers.ts';
import { linkedSocket, waitFor } from './helpers.ts';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('sandbox: media through the local HTTPS media host', () => {
  let sandbox: Sandbox;
  let me: TestSocket;
  const received: WAMessage[] = [];
  beforeAll(async () => {
    sandbox = await startSandbox();
    trustSandbox(sandbox.rootPublicKey);
    me = await linkedSocket(sandbox, '15559990001');
    me.sock.ev.on('messages.upsert', ({ messages }) => received.push(...messages));
    sandbox.control.addPhone('15559990002', 'Kim');
  });
  afterAll(async () => {
    me?.sock.end(undefined);
    await sandbox?.close();
  });

  it('a companion uploads an image and a document; the phone decrypts both files', async () => {
    const image = randomBytes(5000);
    const doc = Buffer.from('%PDF-1.4 sandbox document');
    const a = await me.sock.sendMessage('15559990002@s.whatsapp.net', { image, caption: 'a photo', mimetype: 'image/jpeg' });
    const b = await me.sock.sendMessage('15559990002@s.whatsapp.net', {
      document: doc,
      mimetype: 'application/pdf',
      fileName: 'terms.pdf',
    });
    const photo = await waitFor(() => sandbox.control.inbox('15559990002').find((e) => e.id === a?.key.id && e.sha256));
    expect(photo).toMatchObject({ kind: 'image', caption: 'a photo', mimetype: 'image/jpeg', size: 5000, sha256: sha(image) });
    const file = await waitFor(() => sandbox.control.inbox('15559990002').find((e) => e.id === b?.key.id && e.sha256));
    expect(file).toMatchObject({ kind: 'document', fileName: 'terms.pdf', mimetype: 'application/pdf', sha256: sha(doc) });
  });

  it('a phone sends an image that Baileys decrypts and downloads', async () => {
    const data = randomBytes(3000);
    const { id } = await sandbox.control.sendMedia('15559990002', '15559990001', {
      type: 'image',
      data,
      mimetype: 'image/png',
      caption: 'from Kim',
    });
    const msg = await waitFor(() => received.find((m) => m.key.id === id));
    expect(msg.message?.imageMessage).toMatchObject({ caption: 'from Kim', mimetype: 'image/png' });
    const stream = await downloadContentFromMessage(msg.message?.imageMessage ?? {}, 'image', {
      options: { dispatcher: new Agent({ connect: { ca: sandbox.mediaCaPem } }) } as RequestInit,
    });
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(sha(Buffer.concat(chunks))).toBe(sha(data));
  });
});
