import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jidNormalizedUser, proto } from 'baileys';
import type { WAMessage, WAMessageKey } from 'baileys';
import { afterAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { startSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import type { TestSocket } from './helpers.ts';
import { memoryAuth, openSocket, waitFor } from './helpers.ts';

const { DELIVERY_ACK } = proto.WebMessageInfo.Status;

const ME = '15556670001';
const BOB = '15556670002';

const cases = [
  {
    name: 'before LIDs, both wrote: Baileys keyed the session by number and migrates it to the LID',
    revealLids: false,
    meWrites: true,
    phase1SessionBy: 'pn',
    retriesFromBaileys: 0,
  },
  {
    // rc14's migrateSession only moves devices in the `device-list` its own usync stored, which a send makes.
    name: 'before LIDs, only the phone wrote: nothing to migrate, one retry receipt starts a LID session',
    revealLids: false,
    meWrites: false,
    phase1SessionBy: 'pn',
    retriesFromBaileys: 1,
  },
  {
    name: 'a pn network that reveals LIDs: Baileys keyed the session by LID from the start',
    revealLids: true,
    meWrites: true,
    phase1SessionBy: 'lid',
    retriesFromBaileys: 0,
  },
] as const;

describe('sandbox: a Signal session made by phone number keeps working when the network moves to LIDs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-migration-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses revealLids: false on a lid network, where every message names the LID', async () => {
    await expect(startSandbox({ addressing: 'lid', revealLids: false })).rejects.toThrow(/needs pn/);
  });

  it.each(cases)('$name', async ({ revealLids, meWrites, phase1SessionBy, retriesFromBaileys }) => {
    const stateFile = join(dir, `revealLids-${String(revealLids)}-meWrites-${String(meWrites)}.json`);
    const auth = memoryAuth();
    const received: WAMessage[] = [];
    const updates: Array<{ key: WAMessageKey; status?: number | null }> = [];
    let sandbox: Sandbox | undefined;
    let me: TestSocket | undefined;
    const connect = async (on: Sandbox) => {
      const socket = openSocket(on, auth);
      socket.sock.ev.on('messages.upsert', ({ messages }) => {
        received.push(...messages);
        updates.push(...messages.map((m) => ({ key: m.key, status: m.status })));
      });
      socket.sock.ev.on('messages.update', (u) => updates.push(...u.map(({ key, update }) => ({ key, status: update.status }))));
      await socket.waitFor((u) => u.connection === 'open');
      return socket;
    };
    const decrypted = (id: string) => waitFor(() => received.find((m) => m.key.id === id && m.message));
    const sessionKeys = () => [...auth.keys.keys()].filter((k) => k.startsWith('session:'));
    const retryReceipts = (on: Sandbox) => {
      const retries = on.control.trace().filter((t) => t.stanza.startsWith('<receipt') && t.stanza.includes("type='retry'"));
      return {
        fromBaileys: retries.filter((t) => t.direction === 'in').length,
        fromPhones: retries.filter((t) => t.direction === 'out').length,
      };
    };

    try {
      // Phase 1: phone-number addressing; a Signal session between BOB's phone and ME's linked device.
      sandbox = await startSandbox({ addressing: 'pn', revealLids, stateFile });
      sandbox.control.addPhone(ME, 'Me');
      sandbox.control.addPhone(BOB, 'Bob');
      const bob = sandbox.control.phone(BOB);
      const bobLidUser = bob.lid.split('@')[0] ?? '';
      const pairing = openSocket(sandbox, auth);
      const { qr } = await pairing.waitFor((u) => Boolean(u.qr));
      await sandbox.control.scanQr(ME, qr ?? '');
      await pairing.waitFor((u) => u.connection === 'close');
      me = await connect(sandbox);
      sandbox.control.setTrace(true);

      const hello = await sandbox.control.sendText(BOB, ME, 'hello by number');
      const helloAtMe = await decrypted(hello.id);
      expect(helloAtMe.message?.conversation).toBe('hello by number');
      expect(helloAtMe.key).toMatchObject({ remoteJid: bob.jid, addressingMode: 'pn' });
      if (meWrites) {
        const reply = await me.sock.sendMessage(bob.jid, { text: 'reply by number' });
        const replyId = reply?.key.id ?? '';
        await waitFor(() => sandbox?.control.inbox(BOB).find((e) => e.id === replyId));
        expect(sandbox.control.inbox(BOB).find((e) => e.id === replyId)).toMatchObject({ content: 'reply by number', duplicates: 0 });
        expect(auth.keys.has(`device-list:${BOB}`)).toBe(true);
      }
      if (phase1SessionBy === 'pn') {
        // Baileys' session with BOB's phone is under the number's Signal address and it knows no LID for it.
        expect(sessionKeys()).toContain(`session:${BOB}.0`);
        expect(sessionKeys()).not.toContain(`session:${bobLidUser}_1.0`);
        expect(await me.sock.signalRepository.lidMapping.getLIDForPN(bob.jid)).toBeNull();
      } else {
        expect(sessionKeys()).toContain(`session:${bobLidUser}_1.0`);
        expect(sessionKeys()).not.toContain(`session:${BOB}.0`);
      }
      expect(retryReceipts(sandbox)).toEqual({ fromBaileys: 0, fromPhones: 0 });
      me.sock.end(undefined);
      me = undefined;
      await sandbox.close();

      // Phase 2: the same phones from the state file, now LID-addressed; the same credentials, no new pairing.
      sandbox = await startSandbox({ addressing: 'lid', stateFile });
      expect(sandbox.control.phone(BOB).lid).toBe(bob.lid);
      sandbox.control.setTrace(true);
      me = await connect(sandbox);

      const again = await sandbox.control.sendText(BOB, ME, 'hello from my LID');
      const againAtMe = await decrypted(again.id);
      expect(againAtMe.message?.conversation).toBe('hello from my LID');
      expect(againAtMe.key).toMatchObject({ remoteJid: bob.lid, remoteJidAlt: bob.jid, addressingMode: 'lid' });
      const fromPhone = sandbox.control.trace().filter((t) => t.direction === 'out' && t.stanza.includes(`id='${again.id}'`));
      for (const t of fromPhone) expect(t.stanza).toContain(`sender_pn='${bob.jid}'`);
      expect(retryReceipts(sandbox)).toEqual({ fromBaileys: retriesFromBaileys, fromPhones: 0 });
      if (retriesFromBaileys === 0) {
        // The phone kept its phase-1 session (a `msg`, not a new `pkmsg`), so Baileys decrypted it with the session it had.
        expect(fromPhone).toHaveLength(1);
        expect(fromPhone[0]?.stanza).toContain("type='msg'");
      }
      expect(sessionKeys()).toContain(`session:${bobLidUser}_1.0`);
      // Migration moves the session (the number's copy is deleted); with nothing migrated the old one stays behind, unused.
      expect(sessionKeys().includes(`session:${BOB}.0`)).toBe(!meWrites);

      const byNumber = await me.sock.sendMessage(bob.jid, { text: 'to your number after the move' });
      const byLid = await me.sock.sendMessage(bob.lid, { text: 'to your LID after the move' });
      const sentIds = [byNumber?.key.id ?? '', byLid?.key.id ?? ''];
      for (const id of sentIds) await waitFor(() => updates.find((u) => u.key.id === id && u.status === DELIVERY_ACK));
      for (const [id, text] of [
        [sentIds[0], 'to your number after the move'],
        [sentIds[1], 'to your LID after the move'],
      ] as const) {
        const entries = sandbox.control.inbox(BOB).filter((e) => e.id === id);
        expect(entries).toHaveLength(1);
        expect(entries[0]).toMatchObject({ content: text, from: `${ME}@s.whatsapp.net`, duplicates: 0 });
      }
      expect(received.filter((m) => m.key.id === again.id && m.message)).toHaveLength(1);
      const retries = retryReceipts(sandbox);
      expect(retries.fromBaileys).toBeLessThanOrEqual(1);
      expect(retries.fromPhones).toBeLessThanOrEqual(1);

      const { lidMapping } = me.sock.signalRepository;
      expect(await lidMapping.getLIDForPN(bob.jid)).toBe(bob.lid);
      expect(jidNormalizedUser((await lidMapping.getPNForLID(bob.lid)) ?? '')).toBe(bob.jid);
    } finally {
      me?.sock.end(undefined);
      await sandbox?.close();
    }
  });
});
