import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slotFor } from '../src/resolvers/pacing.ts';
import type { TestApp } from './helpers/app.ts';
import { dbKinds, startTestApp } from './helpers/app.ts';

const DAY = 24 * 3600 * 1000;

describe.each(dbKinds)("the warm-up's daily cap across a restart (%s)", (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind, {
      SEND_PACING: 'on',
      PACING_INTERVAL_MS: 0,
      PACING_JITTER_MS: 0,
      PACING_PER_CHAT_MS: 0,
      PACING_WARMUP_CAPS: '4,8',
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it("counts what the number sent earlier in its warm-up day (the SENT records) before the process's first slot", async () => {
    const account = await app.newAccount();
    const now = Date.now();
    // linked 25 hours ago: its warm-up day 1 began an hour ago, with a cap of 8
    const linkedAt = new Date(now - DAY - 3_600_000);
    const dayStart = linkedAt.getTime() + DAY;
    const session = await app.db.session.create({ data: { accountId: account.id, sessionName: 'warming', linkedAt } });
    const other = await app.db.session.create({ data: { accountId: account.id, sessionName: 'other', linkedAt } });
    const sent = (sessionId: string, sentAt: Date, status = 'SENT') => ({
      accountId: account.id,
      sessionId,
      toNumber: '15550001111',
      content: 'earlier',
      status,
      sentAt: status === 'SENT' ? sentAt : null,
    });
    await app.db.outgoingMessage.createMany({
      data: [
        // sent today by the process before the restart: these count
        ...Array.from({ length: 6 }, (_, i) => sent(session.id, new Date(dayStart + 60_000 * (i + 1)))),
        // yesterday's (day 0), another session's, and ones that did not go: these do not
        ...Array.from({ length: 3 }, () => sent(session.id, new Date(dayStart - 60_000))),
        ...Array.from({ length: 3 }, () => sent(other.id, new Date(dayStart + 60_000))),
        sent(session.id, new Date(dayStart + 60_000), 'FAILED'),
      ],
    });
    // the restarted process's pacer knows nothing of them: two more fit in today's 8
    const at = [];
    for (let i = 0; i < 3; i += 1) at.push((await slotFor(app.deps, session.id, `1555000200${i}@s.whatsapp.net`, 5, `m${i}`))?.at);
    expect(at.slice(0, 2).every((t) => t !== undefined && t <= Date.now())).toBe(true);
    // the third waits for the next warm-up day (past the last capped day: no cap)
    expect(at[2]).toBe(dayStart + DAY);
    // the other session has only its own three counted: five more go today
    for (let i = 0; i < 5; i += 1) {
      const slot = await slotFor(app.deps, other.id, `1555000300${i}@s.whatsapp.net`, 5, `o${i}`);
      expect(slot?.at).toBeLessThanOrEqual(Date.now());
    }
    expect((await slotFor(app.deps, other.id, '15550003009@s.whatsapp.net', 5, 'o9'))?.at).toBe(dayStart + DAY);
  });
});
