import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slotFor } from '../src/resolvers/pacing.ts';
import type { TestApp } from './helpers/app.ts';
import { dbKinds, startTestApp } from './helpers/app.ts';

const CHAT = '15550004444@s.whatsapp.net';

/**
 * A queued message's job released its slot before its SENT was written. A send to the same chat asking
 * for its slot in between found the record still PENDING and due, and took it for one whose job had not
 * asked yet: it headed the chat's queue, was never taken, and held every later queued message of the chat
 * back (the cluster soak, issue 46: three messages sent 81 s after their sendAt). The job now releases the
 * slot once the outcome is written (runDueMessage's finish); until then the pacer knows the record as taken.
 */
describe.each(dbKinds)('a queued message being sent is not queued again (%s)', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind, {
      SEND_PACING: 'on',
      PACING_INTERVAL_MS: 500,
      PACING_JITTER_MS: 0,
      PACING_PER_CHAT_MS: 0,
      PACING_TYPING_MS_PER_CHAR: 0,
      PACING_WARMUP_CAPS: '',
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a send asking for its slot while an earlier one of its chat is claimed and on its way waits for nothing but the pace', async () => {
    const account = await app.newAccount();
    const session = await app.db.session.create({ data: { accountId: account.id, sessionName: 'claimed' } });
    const { pacer } = app.deps;
    // The earlier message: queued with its slot, then its job claimed it, took the slot and sent it; its
    // SENT is being written (the slot is released after that write).
    const first = await slotFor(app.deps, session.id, CHAT, 5, 'first');
    expect(first).not.toBeNull();
    await app.db.outgoingMessage.create({
      data: {
        id: 'first',
        accountId: account.id,
        sessionId: session.id,
        toNumber: CHAT,
        content: 'first',
        status: 'PENDING',
        sendAt: new Date(Math.min(first?.at ?? 0, Date.now())),
        claimedAt: new Date(),
      },
    });
    pacer.take(session.id, 'first');
    // The next message of the chat asks for its slot meanwhile: the earlier one is not queued again.
    await slotFor(app.deps, session.id, CHAT, 5, 'second');
    expect(pacer.holds(session.id, 'first')).toBe(false);
    expect(pacer.health(session.id).queued).toBe(1);
    // Its SENT written, the job releases it; a later send of the chat finds nothing due ahead of it.
    await app.db.outgoingMessage.update({ where: { id: 'first' }, data: { status: 'SENT', sentAt: new Date() } });
    pacer.release(session.id, 'first');
    await slotFor(app.deps, session.id, CHAT, 5, 'third');
    expect(pacer.holds(session.id, 'first')).toBe(false);
    expect(pacer.health(session.id).queued).toBe(2);
  });
});
