import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slotFor } from '../src/resolvers/pacing.ts';
import type { TestApp } from './helpers/app.ts';
import { dbKinds, startTestApp } from './helpers/app.ts';

const CHAT = '15550004444@s.whatsapp.net';

/**
 * A queued message's job releases its slot before its SENT is written. A send to the same chat asking
 * for its slot in between found the record still PENDING and due, and took it for one whose job had not
 * asked yet: it headed the chat's queue, was never taken, and held every later queued message of the chat
 * back (the cluster soak, issue 46: three messages sent 81 s after their sendAt).
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
    // The earlier message: queued with its slot, then its job claimed it, took the slot, sent it and
    // released the slot; its SENT is not written yet.
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
    pacer.release(session.id, 'first');
    // The next message of the chat asks for its slot.
    await slotFor(app.deps, session.id, CHAT, 5, 'second');
    expect(pacer.holds(session.id, 'first')).toBe(false);
    expect(pacer.health(session.id).queued).toBe(1);
  });
});
