import { createHash, randomBytes } from 'node:crypto';
import { downloadMediaMessage, jidNormalizedUser, proto } from 'baileys';
import type { WAMessage, WAMessageKey } from 'baileys';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { startSandbox, trustSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import type { TestSocket } from './helpers.ts';
import { linkedSocket, memoryAuth, openSocket, waitFor } from './helpers.ts';

const { DELIVERY_ACK, ERROR } = proto.WebMessageInfo.Status;
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

const ME = '15554440001';
const BOB = '15554440002';
const HIDDEN = '15554440003';
const STRICT = '15554440004';
const MEMBER = '15554440005';

describe('sandbox: LID addressing (the default)', () => {
  let sandbox: Sandbox;
  let me: TestSocket;
  const received: WAMessage[] = [];
  const updates: Array<{ key: WAMessageKey; status?: number | null; stub?: string[] | null }> = [];
  // What this account sent, for Baileys' getMessage when a phone asks for a message again.
  const sent = new Map<string, proto.IMessage>();

  const control = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const res = await fetch(new URL(path, sandbox.controlUrl), {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const send = async (jid: string, text: string) => {
    const msg = await me.sock.sendMessage(jid, { text });
    if (!msg?.key.id || !msg.message) throw new Error('nothing was sent');
    sent.set(msg.key.id, msg.message);
    return msg.key.id;
  };

  const auth = memoryAuth();
  /** Opens this account's socket (again), with the listeners the tests read. */
  const connect = async () => {
    const socket = openSocket(sandbox, auth, { getMessage: async (key) => (key.id ? sent.get(key.id) : undefined) });
    // A status that arrives while the sent message's own upsert is still buffered is merged into that upsert.
    socket.sock.ev.on('messages.upsert', ({ messages }) => {
      received.push(...messages);
      updates.push(...messages.map((m) => ({ key: m.key, status: m.status, stub: m.messageStubParameters })));
    });
    socket.sock.ev.on('messages.update', (u) =>
      updates.push(...u.map(({ key, update }) => ({ key, status: update.status, stub: update.messageStubParameters }))),
    );
    await socket.waitFor((u) => u.connection === 'open');
    return socket;
  };

  beforeAll(async () => {
    sandbox = await startSandbox();
    trustSandbox(sandbox.rootPublicKey);
    sandbox.control.addPhone(ME, 'Me');
    const first = openSocket(sandbox, auth);
    const { qr } = await first.waitFor((u) => Boolean(u.qr));
    await sandbox.control.scanQr(ME, qr ?? '');
    await first.waitFor((u) => u.connection === 'close');
    me = await connect();
    for (const [number, name] of [
      [BOB, 'Bob'],
      [HIDDEN, 'Hana'],
      [STRICT, 'Stan'],
    ] as const) {
      sandbox.control.addPhone(number, name);
    }
  });
  afterAll(async () => {
    me?.sock.end(undefined);
    await sandbox?.close();
  });

  it('reports its mode and each phone LID on the control API', async () => {
    expect((await control('GET', '/info')).body.addressing).toBe('lid');
    const bob = (await control('GET', `/phones/${BOB}`)).body;
    expect(bob).toMatchObject({ number: BOB, jid: `${BOB}@s.whatsapp.net`, hideNumber: false, requireToken: false });
    expect(bob.lid).toMatch(/^\d+@lid$/);
  });

  it("a phone's text arrives from its LID, with its phone number as remoteJidAlt", async () => {
    const bob = sandbox.control.phone(BOB);
    const { id } = await sandbox.control.sendText(BOB, ME, 'hi from a LID');
    const msg = await waitFor(() => received.find((m) => m.key.id === id));
    expect(msg.message?.conversation).toBe('hi from a LID');
    expect(msg.key).toMatchObject({ remoteJid: bob.lid, remoteJidAlt: bob.jid, fromMe: false, addressingMode: 'lid' });
    expect(jidNormalizedUser((await me.sock.signalRepository.lidMapping.getPNForLID(bob.lid)) ?? '')).toBe(bob.jid);
  });

  it('a phone that hides its number writes from its LID alone', async () => {
    expect((await control('POST', `/phones/${HIDDEN}/hide-number`, { hide: true })).body.hideNumber).toBe(true);
    const hidden = sandbox.control.phone(HIDDEN);
    const res = await control('POST', `/phones/${HIDDEN}/send`, { to: ME, text: 'who am I?' });
    const msg = await waitFor(() => received.find((m) => m.key.id === res.body.id));
    expect(msg.message?.conversation).toBe('who am I?');
    expect(msg.key.remoteJid).toBe(hidden.lid);
    expect(msg.key.remoteJidAlt).toBeUndefined();
    expect(await me.sock.signalRepository.lidMapping.getPNForLID(hidden.lid)).toBeNull();
  });

  it('a send to the phone number and one to the LID both reach the phone; Baileys keeps the mapping', async () => {
    const strict = sandbox.control.phone(STRICT);
    const byNumber = await send(strict.jid, 'to your number');
    const byLid = await send(strict.lid, 'to your LID');
    for (const id of [byNumber, byLid]) await waitFor(() => sandbox.control.inbox(STRICT).find((e) => e.id === id));
    expect(sandbox.control.inbox(STRICT).map((e) => e.content)).toEqual(['to your number', 'to your LID']);
    expect(jidNormalizedUser((await me.sock.signalRepository.lidMapping.getPNForLID(strict.lid)) ?? '')).toBe(strict.jid);
    expect(await me.sock.signalRepository.lidMapping.getLIDForPN(strict.jid)).toBe(strict.lid);
  });

  it("the phone's delivery and read receipts come from its LID", async () => {
    const bob = sandbox.control.phone(BOB);
    sandbox.control.setTrace(true);
    const id = await send(bob.jid, 'receipt from a LID?');
    await waitFor(() => updates.find((u) => u.key.id === id && u.status === DELIVERY_ACK));
    expect(updates.find((u) => u.key.id === id && u.status === DELIVERY_ACK)?.key.remoteJid).toBe(bob.lid);
    sandbox.control.read(BOB, { ids: [id] });
    await waitFor(() => updates.find((u) => u.key.id === id && u.status === proto.WebMessageInfo.Status.READ));
    sandbox.control.setTrace(false);
    const receipts = sandbox.control
      .trace()
      .filter((t) => t.direction === 'out' && t.stanza.startsWith('<receipt') && t.stanza.includes(`id='${id}'`));
    expect(receipts).toHaveLength(2);
    for (const r of receipts) expect(r.stanza).toContain(`from='${bob.lid}'`);
  });

  it('a phone that lost its sessions recovers both ways through retry receipts sent and answered by LID', async () => {
    const bob = sandbox.control.phone(BOB);
    sandbox.control.setTrace(true);
    sandbox.control.loseSessions(BOB);
    // The phone's new session names a prekey the device no longer has: the device asks the LID again.
    const reply = await sandbox.control.sendText(BOB, ME, 'after the loss');
    const msg = await waitFor(() => received.find((m) => m.key.id === reply.id && m.message?.conversation));
    expect(msg.key).toMatchObject({ remoteJid: bob.lid, remoteJidAlt: bob.jid });
    const id = await send(bob.jid, 'answer after the loss');
    await waitFor(() => sandbox.control.inbox(BOB).find((e) => e.id === id));
    sandbox.control.setTrace(false);
    const retries = sandbox.control.trace().filter((t) => t.stanza.startsWith('<receipt') && t.stanza.includes("type='retry'"));
    expect(retries.find((t) => t.direction === 'in' && t.stanza.includes(`id='${reply.id}'`))?.stanza).toContain(`to='${bob.lid}'`);
    for (const retry of retries.filter((t) => t.direction === 'out')) expect(retry.stanza).toContain(`from='${bob.lid}'`);
    expect(received.filter((m) => m.key.id === reply.id && m.message?.conversation)).toHaveLength(1);
  });

  it('a message held while the device was away is delivered again from the LID when it logs in', async () => {
    const bob = sandbox.control.phone(BOB);
    sandbox.control.freeze(ME);
    const held = await sandbox.control.sendText(BOB, ME, 'while you were away');
    expect(sandbox.control.delivery(BOB, held.id)?.waiting).toEqual([1]);
    sandbox.control.dropDevice(ME);
    await me.waitFor((u) => u.connection === 'close');
    me = await connect();
    const msg = await waitFor(() => received.find((m) => m.key.id === held.id));
    expect(msg.key).toMatchObject({ remoteJid: bob.lid, remoteJidAlt: bob.jid });
    await waitFor(() => sandbox.control.delivery(BOB, held.id)?.waiting.length === 0);
  });

  it('a phone that requires a privacy token refuses a first message with ack 463; once it wrote, sends go through', async () => {
    const strict = sandbox.control.phone(STRICT);
    expect((await control('POST', `/phones/${STRICT}/require-token`, { require: true })).body.requireToken).toBe(true);
    const refused = await send(strict.jid, 'cold message');
    const error = await waitFor(() => updates.find((u) => u.key.id === refused && u.status === ERROR));
    // rc14 reads 463 as both MessageAccountRestriction and SenderReachoutTimelocked, hence the second parameter.
    expect(error.stub).toEqual(['463', 'Your account has been restricted']);
    expect(sandbox.control.inbox(STRICT).some((e) => e.id === refused)).toBe(false);

    // Writing to the account hands it the phone's token (a privacy_token notification); Baileys attaches it from then on.
    const hello = await sandbox.control.sendText(STRICT, ME, 'hello, you may write to me');
    await waitFor(() => received.find((m) => m.key.id === hello.id));
    expect(sandbox.control.phone(STRICT).tokensIssuedTo).toEqual([ME]);
    const accepted = await send(strict.jid, 'warm message');
    await waitFor(() => sandbox.control.inbox(STRICT).find((e) => e.id === accepted));
    await waitFor(() => updates.find((u) => u.key.id === accepted && u.status === DELIVERY_ACK));
  });

  it('a phone sends an image and a document through the control API that Baileys downloads to the same bytes', async () => {
    const image = randomBytes(4000);
    const doc = Buffer.from('%PDF-1.4 from a phone');
    const a = await control('POST', `/phones/${BOB}/send-media`, {
      to: ME,
      type: 'image',
      data: image.toString('base64'),
      mimetype: 'image/jpeg',
      caption: 'a photo',
    });
    const b = await control('POST', `/phones/${BOB}/send-media`, {
      to: ME,
      type: 'document',
      data: doc.toString('base64'),
      mimetype: 'application/pdf',
      fileName: 'terms.pdf',
      caption: 'the terms',
    });
    expect(a.status).toBe(200);
    const photo = await waitFor(() => received.find((m) => m.key.id === a.body.id));
    const file = await waitFor(() => received.find((m) => m.key.id === b.body.id));
    expect(photo.message?.imageMessage).toMatchObject({ caption: 'a photo', mimetype: 'image/jpeg' });
    expect(file.message?.documentMessage).toMatchObject({ fileName: 'terms.pdf', mimetype: 'application/pdf', caption: 'the terms' });
    const download = async (m: WAMessage) =>
      (await downloadMediaMessage(m, 'buffer', {
        options: { dispatcher: new Agent({ connect: { ca: sandbox.mediaCaPem } }) } as RequestInit,
      })) as Buffer;
    expect(sha(await download(photo))).toBe(sha(image));
    expect(sha(await download(file))).toBe(sha(doc));
    expect((await control('POST', `/phones/${BOB}/send-media`, { to: ME, type: 'image', data: 'not base64!', mimetype: 'x' })).status).toBe(
      400,
    );
  });

  it('a LID group: participants by LID with their numbers, owner_pn, and a member message with participant and participantAlt', async () => {
    const member = await linkedSocket(sandbox, MEMBER);
    try {
      const bob = sandbox.control.phone(BOB);
      const hidden = sandbox.control.phone(HIDDEN);
      const mine = sandbox.control.phone(ME);
      const other = sandbox.control.phone(MEMBER);
      const group = await me.sock.groupCreate('LID group', [bob.jid, hidden.lid, other.jid]);
      const meta = await me.sock.groupMetadata(group.id);
      expect(meta).toMatchObject({ addressingMode: 'lid', owner: mine.lid, ownerPn: mine.jid, subjectOwner: mine.lid });
      expect(meta.participants.map(({ id, phoneNumber }) => ({ id, phoneNumber }))).toEqual(
        expect.arrayContaining([
          { id: mine.lid, phoneNumber: mine.jid },
          { id: bob.lid, phoneNumber: bob.jid },
          { id: hidden.lid, phoneNumber: undefined },
          { id: other.lid, phoneNumber: other.jid },
        ]),
      );
      const memberGot: WAMessage[] = [];
      member.sock.ev.on('messages.upsert', ({ messages }) => memberGot.push(...messages));
      const first = await me.sock.sendMessage(group.id, { text: 'hello LID group' });
      for (const n of [BOB, HIDDEN]) await waitFor(() => sandbox.control.inbox(n).find((e) => e.id === first?.key.id));
      const atMember = await waitFor(() => memberGot.find((m) => m.key.id === first?.key.id && m.message));
      expect(jidNormalizedUser(atMember.key.participant ?? '')).toBe(mine.lid);
      expect(atMember.key.participantAlt).toBe(mine.jid);

      const fromMember = await member.sock.sendMessage(group.id, { text: 'a member writes' });
      const atMe = await waitFor(() => received.find((m) => m.key.id === fromMember?.key.id && m.message));
      expect(atMe.message?.conversation ?? atMe.message?.extendedTextMessage?.text).toBe('a member writes');
      expect(atMe.key).toMatchObject({ remoteJid: group.id, participantAlt: other.jid, addressingMode: 'lid' });
      expect(jidNormalizedUser(atMe.key.participant ?? '')).toBe(other.lid);

      // w:gp2 changes name members by LID with phone_number, and the actor with participant_pn; rc14 drops the
      // latter (handleNotification passes the key through proto.WebMessageInfo.fromObject, which has no participantAlt).
      const changes: Array<{
        author: string;
        action: string;
        participants: Array<{ id: string; phoneNumber?: string }>;
      }> = [];
      member.sock.ev.on('group-participants.update', (u) => changes.push(u));
      sandbox.control.setTrace(true);
      await me.sock.groupParticipantsUpdate(group.id, [bob.jid], 'promote');
      const [removed] = await me.sock.groupParticipantsUpdate(group.id, [hidden.lid], 'remove');
      expect(removed).toMatchObject({ status: '200', jid: hidden.lid });
      await waitFor(() => changes.length === 2);
      sandbox.control.setTrace(false);
      const notices = sandbox.control.trace().filter((t) => t.direction === 'out' && t.stanza.includes("type='w:gp2'"));
      expect(notices.length).toBeGreaterThanOrEqual(2);
      for (const n of notices) expect(n.stanza).toContain(`participant_pn='${mine.jid}'`);
      expect(changes.map(({ author, action, participants }) => ({ author, action, participants }))).toEqual([
        { author: mine.lid, action: 'promote', participants: [{ id: bob.lid, phoneNumber: bob.jid, admin: null }] },
        { author: mine.lid, action: 'remove', participants: [{ id: hidden.lid, admin: null }] },
      ]);
    } finally {
      member.sock.end(undefined);
    }
  });
});

describe('sandbox: phone-number addressing (SANDBOX_ADDRESSING=pn)', () => {
  let sandbox: Sandbox;
  let me: TestSocket;
  const received: WAMessage[] = [];
  beforeAll(async () => {
    sandbox = await startSandbox({ addressing: 'pn' });
    trustSandbox(sandbox.rootPublicKey);
    me = await linkedSocket(sandbox, ME);
    me.sock.ev.on('messages.upsert', ({ messages }) => received.push(...messages));
    sandbox.control.addPhone(BOB, 'Bob');
  });
  afterAll(async () => {
    me?.sock.end(undefined);
    await sandbox?.close();
  });

  it("a phone's text arrives from its phone number, and a hidden one's from its LID alone", async () => {
    expect(sandbox.addressing).toBe('pn');
    const bob = sandbox.control.phone(BOB);
    const plain = await sandbox.control.sendText(BOB, ME, 'by number');
    expect((await waitFor(() => received.find((m) => m.key.id === plain.id))).key).toMatchObject({
      remoteJid: bob.jid,
      addressingMode: 'pn',
    });
    sandbox.control.hideNumber(BOB);
    const hidden = await sandbox.control.sendText(BOB, ME, 'by LID');
    const msg = await waitFor(() => received.find((m) => m.key.id === hidden.id));
    expect(msg.key.remoteJid).toBe(bob.lid);
    expect(msg.key.remoteJidAlt).toBeUndefined();
    expect(msg.message?.conversation).toBe('by LID');
  });

  it('the privacy token works by phone number too (filed under the sender_lid), and 463 without it', async () => {
    sandbox.control.addPhone(STRICT, 'Stan');
    sandbox.control.requireToken(STRICT);
    const cold = await me.sock.sendMessage(`${STRICT}@s.whatsapp.net`, { text: 'cold' });
    await new Promise((r) => setTimeout(r, 300));
    expect(sandbox.control.inbox(STRICT).some((e) => e.id === cold?.key.id)).toBe(false);
    const hello = await sandbox.control.sendText(STRICT, ME, 'write to me');
    await waitFor(() => received.find((m) => m.key.id === hello.id));
    const warm = await me.sock.sendMessage(`${STRICT}@s.whatsapp.net`, { text: 'warm' });
    await waitFor(() => sandbox.control.inbox(STRICT).find((e) => e.id === warm?.key.id));
  });
});
