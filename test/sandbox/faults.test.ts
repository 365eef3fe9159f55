import { DisconnectReason } from 'baileys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { startSandbox, trustSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import type { TestSocket } from './helpers.ts';
import { linkedSocket, memoryAuth, openSocket, waitFor } from './helpers.ts';

const statusCode = (error: unknown) => (error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode;

describe('sandbox: faults, receipts, duplicates and the trace', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox();
    trustSandbox(sandbox.rootPublicKey);
    sandbox.control.addPhone('15550600002', 'Peer');
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('drops a connection; a new socket with the same credentials logs in again', async () => {
    sandbox.control.addPhone('15550600001', 'Owner');
    const auth = memoryAuth();
    const first = openSocket(sandbox, auth);
    const { qr } = await first.waitFor((u) => Boolean(u.qr));
    await sandbox.control.scanQr('15550600001', qr ?? '');
    await first.waitFor((u) => u.connection === 'close');
    const linked = openSocket(sandbox, auth);
    await linked.waitFor((u) => u.connection === 'open');
    expect(sandbox.control.dropDevice('15550600001')).toBe(1);
    const closed = await linked.waitFor((u) => u.connection === 'close');
    expect(statusCode(closed.lastDisconnect?.error)).not.toBe(DisconnectReason.loggedOut);
    const again = openSocket(sandbox, auth);
    await again.waitFor((u) => u.connection === 'open');
    expect(again.updates.some((u) => u.qr)).toBe(false);
    again.sock.end(undefined);
  });

  it('acknowledges each message with a server ack and a delivery receipt, and withholds them on demand', async () => {
    const me: TestSocket = await linkedSocket(sandbox, '15550600003');
    sandbox.control.setTrace(true);
    const sent = await me.sock.sendMessage('15550600002@s.whatsapp.net', { text: 'receipt please' });
    await waitFor(() =>
      sandbox.control
        .trace()
        .find((t) => t.direction === 'in' && t.stanza.includes(`id='${sent?.key.id}'`) && t.stanza.includes("class='receipt'")),
    );
    expect(
      sandbox.control
        .trace()
        .filter((t) => t.direction === 'out' && t.stanza.includes(`id='${sent?.key.id}'`))
        .map((t) => t.stanza.split(' ')[0]),
    ).toEqual(['<ack', '<receipt']);
    sandbox.control.setAcks('15550600003', { withhold: true });
    const quiet = await me.sock.sendMessage('15550600002@s.whatsapp.net', { text: 'no receipt' });
    await waitFor(() => sandbox.control.inbox('15550600002').find((e) => e.id === quiet?.key.id));
    await new Promise((r) => setTimeout(r, 200));
    expect(sandbox.control.trace().some((t) => t.direction === 'out' && t.stanza.includes(`id='${quiet?.key.id}'`))).toBe(false);
    sandbox.control.setTrace(false);
    me.sock.end(undefined);
  });

  it('shows a message id once in the inbox and counts the duplicate', async () => {
    const me = await linkedSocket(sandbox, '15550600004');
    await me.sock.sendMessage('15550600002@s.whatsapp.net', { text: 'only once' }, { messageId: 'DUPLICATE-ID-1' });
    await me.sock.sendMessage('15550600002@s.whatsapp.net', { text: 'only once' }, { messageId: 'DUPLICATE-ID-1' });
    const entry = await waitFor(() => sandbox.control.inbox('15550600002').find((e) => e.id === 'DUPLICATE-ID-1' && e.duplicates === 1));
    expect(sandbox.control.inbox('15550600002').filter((e) => e.id === 'DUPLICATE-ID-1')).toHaveLength(1);
    expect(entry.content).toBe('only once');
    me.sock.end(undefined);
  });

  it('traces stanzas when switched on, and answers an unmodelled IQ with an error', async () => {
    const me = await linkedSocket(sandbox, '15550600005');
    sandbox.control.setTrace(true);
    await expect(
      me.sock.query({
        tag: 'iq',
        attrs: { to: 's.whatsapp.net', type: 'get', xmlns: 'w:not-modelled' },
        content: [{ tag: 'thing', attrs: {} }],
      }),
    ).rejects.toThrow();
    const traced = await me.sock.sendMessage('15550600002@s.whatsapp.net', { text: 'traced' });
    await waitFor(() => sandbox.control.inbox('15550600002').find((e) => e.id === traced?.key.id));
    sandbox.control.setTrace(false);
    const trace = sandbox.control.trace();
    expect(trace.some((t) => t.direction === 'in' && t.stanza.includes('w:not-modelled'))).toBe(true);
    expect(trace.some((t) => t.direction === 'out' && t.stanza.includes('feature-not-implemented'))).toBe(true);
    expect(trace.some((t) => t.direction === 'in' && t.stanza.startsWith('<message'))).toBe(true);
    me.sock.end(undefined);
  });
});
