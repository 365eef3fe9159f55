import { createHash, randomBytes } from 'node:crypto';
import { Agent } from 'node:https';
import makeWASocket, { downloadContentFromMessage, downloadMediaMessage, jidNormalizedUser, proto } from 'baileys';
import type { BaileysEventMap, WAMessage, WASocket } from 'baileys';
import { pino } from 'pino';
import { Agent as UndiciAgent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { startSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { memoryAuth, waitFor } from './helpers.ts';

// What a bartender-based suite does, with nothing of ours in the client: the fixed ADV secret written
// into the credentials, the push name in the socket options, TLS accepted as self-signed, and the QR
// text posted to the admin path. No trustSandbox: these clients are as bare as Baileys ships.
const ADV_SECRET_KEY = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
const insecure = new Agent({ rejectUnauthorized: false });
const insecureFetch = new UndiciAgent({ connect: { rejectUnauthorized: false } });
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

interface Client {
  sock: WASocket;
  pushName: string;
  meJid: string;
  meLid?: string;
  received: WAMessage[];
  events: Array<{ event: keyof BaileysEventMap; data: unknown }>;
}

const postQr = (socketUrl: string, qr: string) => {
  const url = new URL('/admin/mock-phone/scan-qr', socketUrl.replace(/^wss:/, 'https:'));
  return fetch(url, { method: 'POST', body: qr, headers: { 'content-type': 'text/plain' }, dispatcher: insecureFetch } as RequestInit);
};

const openClient = (socketUrl: string, pushName: string, auth: ReturnType<typeof memoryAuth>) =>
  makeWASocket({
    auth: auth.state,
    waWebSocketUrl: socketUrl,
    pushName,
    agent: insecure,
    fetchAgent: insecure,
    logger: pino({ level: process.env.BAILEYS_LOG ?? 'silent' }),
    // history sync is not modelled: without this Baileys holds events 20 s on a first connection
    shouldSyncHistoryMessage: () => false,
  });

/** Connects until open: the QR goes to the mock phone, the 515 restart is followed by a new socket. */
const connectClient = async (socketUrl: string, pushName: string, advSecretKey = ADV_SECRET_KEY): Promise<Client> => {
  const auth = memoryAuth();
  auth.state.creds.advSecretKey = advSecretKey;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const sock = openClient(socketUrl, pushName, auth);
    const outcome = await new Promise<'open' | 'closed'>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${pushName} did not connect`)), 15_000);
      let scanned = false;
      sock.ev.on('connection.update', ({ qr, connection }) => {
        if (qr && !scanned) {
          scanned = true;
          void postQr(socketUrl, qr).then(async (res) => {
            if (!res.ok) {
              clearTimeout(timer);
              reject(new Error(`scan refused: ${res.status} ${await res.text()}`));
            }
          });
        }
        if (connection === 'open' || connection === 'close') {
          clearTimeout(timer);
          resolve(connection === 'open' ? 'open' : 'closed');
        }
      });
    }).catch((err: unknown) => {
      sock.end(undefined);
      throw err;
    });
    if (outcome === 'closed') continue;
    const client: Client = { sock, pushName, meJid: jidNormalizedUser(sock.user?.id), meLid: sock.user?.lid, received: [], events: [] };
    sock.ev.on('messages.upsert', ({ messages }) => client.received.push(...messages));
    for (const event of ['groups.upsert', 'group-participants.update', 'messages.update', 'messages.reaction'] as const) {
      sock.ev.on(event, (data: unknown) => client.events.push({ event, data }));
    }
    return client;
  }
  throw new Error(`${pushName} kept closing`);
};

/** A client's account as a LID-addressed group names it. */
const lidOf = (c: Client) => `${c.meLid?.split(':')[0]}@lid`;
const keyOf = (m: WAMessage | undefined) => {
  if (!m) throw new Error('nothing was sent');
  return m.key;
};
const textOf = (m: WAMessage) => m.message?.conversation ?? m.message?.extendedTextMessage?.text ?? undefined;
const receivedText = (client: Client, text: string, chat?: string) =>
  waitFor(() => client.received.find((m) => !m.key.fromMe && textOf(m) === text && (!chat || m.key.remoteJid === chat)));
const download = async (msg: WAMessage): Promise<Buffer> =>
  (await downloadMediaMessage(msg, 'buffer', { options: { dispatcher: insecureFetch } as RequestInit })) as Buffer;

describe('sandbox in bartender mode: bare Baileys clients, as Baileys e2e suite drives them', () => {
  let sandbox: Sandbox;
  let socketUrl: string;
  let alice: Client;
  let bob: Client;
  let charlie: Client;
  const extra: Client[] = [];
  const names = {
    alice: `alice-${randomBytes(3).toString('hex')}`,
    bob: `bob-${randomBytes(3).toString('hex')}`,
    charlie: `charlie-${randomBytes(3).toString('hex')}`,
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ bartender: { port: 0, advSecretKey: ADV_SECRET_KEY } });
    socketUrl = sandbox.bartender?.url ?? '';
    [alice, bob, charlie] = await Promise.all([
      connectClient(socketUrl, names.alice),
      connectClient(socketUrl, names.bob),
      connectClient(socketUrl, names.charlie),
    ]);
  });
  afterAll(async () => {
    for (const c of [alice, bob, charlie, ...extra]) c?.sock.end(undefined);
    await sandbox?.close();
  });

  it('serves /ws/chat and the admin scan on one TLS port; each push name gets its own phone number', async () => {
    expect(socketUrl).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/ws\/chat$/);
    const phones = [alice, bob, charlie].map((c) => sandbox.control.phone(c.meJid.split('@')[0] ?? ''));
    expect(phones.map((p) => p.name)).toEqual([names.alice, names.bob, names.charlie]);
    expect(phones.map((p) => p.devices)).toEqual([[1], [1], [1]]);
    expect(new Set(phones.map((p) => p.number)).size).toBe(3);
    expect(alice.meLid).toBe(`${phones[0]?.lid.split('@')[0]}:1@lid`);
    const home = await fetch(socketUrl.replace(/^wss:/, 'https:').replace('/ws/chat', '/'), { dispatcher: insecureFetch } as RequestInit);
    expect(home.status).toBe(200);
  });

  it('the same push name with new credentials lands on the same number, as a second device', async () => {
    const again = await connectClient(socketUrl, names.alice);
    extra.push(again);
    expect(again.meJid).toBe(alice.meJid);
    expect(sandbox.control.phone(alice.meJid.split('@')[0] ?? '').devices).toEqual([1, 2]);
    again.sock.end(undefined);
  });

  it('refuses a body that is not a QR string, a QR nobody shows, and a different ADV secret, each with a clear error', async () => {
    const notQr = await postQr(socketUrl, 'hello');
    expect(notQr.status).toBe(400);
    expect(((await notQr.json()) as { error: string }).error).toMatch(/QR string/);
    const stale = await postQr(
      socketUrl,
      `ref,${Buffer.alloc(32).toString('base64')},${Buffer.alloc(32).toString('base64')},${ADV_SECRET_KEY},WEB`,
    );
    expect(stale.status).toBe(404);
    await expect(connectClient(socketUrl, 'mallory', Buffer.alloc(32, 7).toString('base64'))).rejects.toThrow(/409.*ADV_SECRET_KEY/);
    const unknown = await fetch(socketUrl.replace(/^wss:/, 'https:').replace('/ws/chat', '/admin/other'), {
      dispatcher: insecureFetch,
    } as RequestInit);
    expect(unknown.status).toBe(404);
  });

  it('an IQ the sandbox does not model is answered with an error', async () => {
    await expect(
      alice.sock.query({ tag: 'iq', attrs: { to: 's.whatsapp.net', type: 'get', xmlns: 'sandbox:not-modelled' } }),
    ).rejects.toThrow(/feature-not-implemented/);
  });

  it('DMs go both ways between linked clients, with the sender push name', async () => {
    await alice.sock.sendMessage(bob.meJid, { text: 'hello Bob' });
    const atBob = await receivedText(bob, 'hello Bob');
    expect(atBob.key.fromMe).toBe(false);
    expect(atBob.pushName).toBe(names.alice);
    expect(jidNormalizedUser(atBob.key.remoteJid ?? '')).toMatch(
      new RegExp(`^(${alice.meJid.split('@')[0]}@s\\.whatsapp\\.net|${alice.meLid?.split(':')[0]}@lid)$`),
    );
    await bob.sock.sendMessage(alice.meJid, { text: 'hello Alice' });
    const atAlice = await receivedText(alice, 'hello Alice');
    expect(atAlice.pushName).toBe(names.bob);
    await alice.sock.sendMessage(bob.meJid, { text: 'and again' });
    await receivedText(bob, 'and again');
  });

  it('edit, reaction, revoke and forward reach the other client', async () => {
    const original = await alice.sock.sendMessage(bob.meJid, { text: 'typo here' });
    await receivedText(bob, 'typo here');
    await alice.sock.sendMessage(bob.meJid, { text: 'fixed here', edit: original?.key });
    const edit = await waitFor(() =>
      bob.received.find((m) => m.message?.protocolMessage?.type === proto.Message.ProtocolMessage.Type.MESSAGE_EDIT),
    );
    expect(edit.message?.protocolMessage?.key?.id).toBe(original?.key.id);
    expect(
      edit.message?.protocolMessage?.editedMessage?.conversation ?? edit.message?.protocolMessage?.editedMessage?.extendedTextMessage?.text,
    ).toBe('fixed here');

    await bob.sock.sendMessage(alice.meJid, {
      react: { text: '👍', key: { id: original?.key.id, fromMe: false, remoteJid: alice.meJid } },
    });
    const reaction = await waitFor(() => alice.received.find((m) => m.message?.reactionMessage?.text === '👍'));
    expect(reaction.message?.reactionMessage?.key?.id).toBe(original?.key.id);

    const doomed = await alice.sock.sendMessage(bob.meJid, { text: 'to be revoked' });
    await receivedText(bob, 'to be revoked');
    await alice.sock.sendMessage(bob.meJid, { delete: keyOf(doomed) });
    const revoke = await waitFor(() =>
      bob.received.find((m) => m.message?.protocolMessage?.type === proto.Message.ProtocolMessage.Type.REVOKE),
    );
    expect(revoke.message?.protocolMessage?.key?.id).toBe(doomed?.key.id);

    const note = await bob.sock.sendMessage(alice.meJid, { text: 'pass this on' });
    const atAlice = await receivedText(alice, 'pass this on');
    expect(note).toBeDefined();
    await alice.sock.sendMessage(charlie.meJid, { forward: atAlice });
    const forwarded = await receivedText(charlie, 'pass this on');
    expect(forwarded.message?.extendedTextMessage?.contextInfo?.isForwarded).toBe(true);
    expect(forwarded.key.id).not.toBe(atAlice.key.id);
  });

  it('every media kind travels between clients and downloads to the same bytes', async () => {
    const files = {
      image: randomBytes(4000),
      video: randomBytes(6000),
      audio: randomBytes(3000),
      document: Buffer.from('%PDF-1.4 a sandbox document'),
      sticker: randomBytes(2000),
    };
    const sent = [
      await alice.sock.sendMessage(bob.meJid, { image: files.image, caption: 'a photo', mimetype: 'image/jpeg' }),
      await alice.sock.sendMessage(bob.meJid, { video: files.video, caption: 'a clip', mimetype: 'video/mp4' }),
      await alice.sock.sendMessage(bob.meJid, { audio: files.audio, ptt: true, mimetype: 'audio/ogg; codecs=opus', seconds: 3 }),
      await alice.sock.sendMessage(bob.meJid, { document: files.document, mimetype: 'application/pdf', fileName: 'terms.pdf' }),
      await alice.sock.sendMessage(bob.meJid, { sticker: files.sticker, mimetype: 'image/webp' }),
    ];
    const atBob = await Promise.all(sent.map((s) => waitFor(() => bob.received.find((m) => m.key.id === s?.key.id))));
    expect(atBob[0]?.message?.imageMessage?.caption).toBe('a photo');
    expect(atBob[1]?.message?.videoMessage?.caption).toBe('a clip');
    expect(atBob[2]?.message?.audioMessage?.ptt).toBe(true);
    expect(atBob[3]?.message?.documentMessage?.fileName).toBe('terms.pdf');
    expect(atBob[4]?.message?.stickerMessage).toBeTruthy();
    const downloaded = await Promise.all(atBob.map((m) => download(m)));
    expect(downloaded.map(sha)).toEqual([files.image, files.video, files.audio, files.document, files.sticker].map(sha));
    // the sender's own copy, through the media host it was told about (Baileys' getMediaHost)
    const own = await downloadMediaMessage(sent[0] as WAMessage, 'buffer', {
      host: alice.sock.getMediaHost(),
      options: { dispatcher: insecureFetch } as RequestInit,
    });
    expect(sha(own as Buffer)).toBe(sha(files.image));
  });

  it('a client writes to itself by number and by LID, and downloads its own and quoted media from the media host it was given', async () => {
    const note = await charlie.sock.sendMessage(charlie.meJid, { text: 'note to self' });
    await waitFor(() => charlie.received.find((m) => m.key.id === note?.key.id && m.key.fromMe));
    const image = randomBytes(2500);
    const sent = await charlie.sock.sendMessage(charlie.meLid ?? '', { image, caption: 'to my LID' });
    const own = await waitFor(() => charlie.received.find((m) => m.key.id === sent?.key.id));
    const host = charlie.sock.getMediaHost();
    expect(host).toBe(new URL(socketUrl).host);
    expect(
      sha((await downloadMediaMessage(own, 'buffer', { host, options: { dispatcher: insecureFetch } as RequestInit })) as Buffer),
    ).toBe(sha(image));
    const command = await charlie.sock.sendMessage(charlie.meJid, { text: '-download' }, { quoted: own });
    const quoted = command?.message?.extendedTextMessage?.contextInfo?.quotedMessage?.imageMessage;
    const stream = await downloadContentFromMessage(
      { url: quoted?.url, mediaKey: quoted?.mediaKey, directPath: quoted?.directPath },
      'image',
      {
        host,
        options: { dispatcher: insecureFetch } as RequestInit,
      },
    );
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(sha(Buffer.concat(chunks))).toBe(sha(image));
  });

  it('a poll and a vCard arrive whole', async () => {
    const poll = await alice.sock.sendMessage(bob.meJid, {
      poll: { name: 'Lunch?', values: ['Pizza', 'Sushi', 'Salad'], selectableCount: 1 },
    });
    const atBob = await waitFor(() => bob.received.find((m) => m.key.id === poll?.key.id));
    const creation = atBob.message?.pollCreationMessageV3 ?? atBob.message?.pollCreationMessage;
    expect(creation?.name).toBe('Lunch?');
    expect(creation?.options?.map((o) => o.optionName)).toEqual(['Pizza', 'Sushi', 'Salad']);
    expect(atBob.message?.messageContextInfo?.messageSecret?.length).toBe(32);

    const vcard = ['BEGIN:VCARD', 'VERSION:3.0', 'FN:Sandbox Contact', 'TEL;type=CELL;waid=15550001234:+1 555 000 1234', 'END:VCARD'].join(
      '\n',
    );
    const card = await bob.sock.sendMessage(alice.meJid, { contacts: { displayName: 'Sandbox Contact', contacts: [{ vcard }] } });
    const atAlice = await waitFor(() => alice.received.find((m) => m.key.id === card?.key.id));
    expect(atAlice.message?.contactMessage?.vcard).toBe(vcard);
  });

  it('a three-member group: create, add, promote, demote, remove, with messages from two senders', async () => {
    const saw = (c: Client, event: keyof BaileysEventMap, check: (data: never) => boolean) =>
      waitFor(() => c.events.find((e) => e.event === event && check(e.data as never)));
    const group = await alice.sock.groupCreate('Bartender group', [bob.meJid]);
    await saw(bob, 'groups.upsert', (list: Array<{ id: string; subject: string }>) =>
      list.some((g) => g.id === group.id && g.subject === 'Bartender group'),
    );

    await alice.sock.sendMessage(group.id, { text: 'hello group' });
    await receivedText(bob, 'hello group', group.id);

    const added = await alice.sock.groupParticipantsUpdate(group.id, [charlie.meJid], 'add');
    expect(added[0]?.status).toBe('200');
    await saw(charlie, 'groups.upsert', (list: Array<{ id: string }>) => list.some((g) => g.id === group.id));
    await saw(bob, 'group-participants.update', (u: { id: string; action: string }) => u.id === group.id && u.action === 'add');

    await alice.sock.sendMessage(group.id, { text: 'welcome Charlie' });
    await Promise.all([receivedText(bob, 'welcome Charlie', group.id), receivedText(charlie, 'welcome Charlie', group.id)]);
    await bob.sock.sendMessage(group.id, { text: 'Bob says hi' });
    const [atAlice] = await Promise.all([receivedText(alice, 'Bob says hi', group.id), receivedText(charlie, 'Bob says hi', group.id)]);
    expect(atAlice.pushName).toBe(names.bob);

    expect((await alice.sock.groupParticipantsUpdate(group.id, [bob.meJid], 'promote'))[0]?.status).toBe('200');
    await saw(bob, 'group-participants.update', (u: { id: string; action: string }) => u.id === group.id && u.action === 'promote');
    const meta = await alice.sock.groupMetadata(group.id);
    expect(meta.addressingMode).toBe('lid');
    expect(meta.participants.find((p) => p.id === lidOf(bob))).toMatchObject({ admin: 'admin', phoneNumber: bob.meJid });
    expect((await alice.sock.groupParticipantsUpdate(group.id, [bob.meJid], 'demote'))[0]?.status).toBe('200');
    await saw(bob, 'group-participants.update', (u: { id: string; action: string }) => u.id === group.id && u.action === 'demote');
    expect((await bob.sock.groupMetadata(group.id)).participants.map((p) => p.id).sort()).toEqual([alice, bob, charlie].map(lidOf).sort());

    sandbox.control.setTrace(true);
    expect((await alice.sock.groupParticipantsUpdate(group.id, [charlie.meJid], 'remove'))[0]?.status).toBe('200');
    await saw(charlie, 'group-participants.update', (u: { id: string; action: string }) => u.id === group.id && u.action === 'remove');
    const after = await alice.sock.sendMessage(group.id, { text: 'after the removal' });
    await receivedText(bob, 'after the removal', group.id);
    const toCharlie = sandbox.control.trace().filter((e) => e.direction === 'out' && e.jid?.startsWith(`${charlie.meJid.split('@')[0]}:`));
    expect(toCharlie.some((e) => e.stanza.includes(after?.key.id ?? '-'))).toBe(false);
    expect(charlie.received.some((m) => m.key.id === after?.key.id)).toBe(false);
    expect((await alice.sock.groupMetadata(group.id)).participants).toHaveLength(2);
  });
});
