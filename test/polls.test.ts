import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import type { InboxEntry } from '../src/runtime/sandbox/directory.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { sandboxAddress, startSandbox } from '../src/runtime/sandbox/sandbox.ts';
import type { Json, TestApp } from './helpers/app.ts';
import { dbKinds, gql, graphqlWs, http, startTestApp } from './helpers/app.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import { linkSession, waitUntil } from './helpers/sandbox.ts';

const ME = '15556610001';
const BOB = '15556610002';
const CAROL = '15556610003';

interface PollContextInfo {
  stanzaId?: string;
  participant?: string;
  quotedMessage?: { conversation?: string; extendedTextMessage?: { text?: string }; pollCreationMessageV3?: { name?: string } };
}
interface RawPoll {
  messageContextInfo?: { messageSecret?: Uint8Array };
  pollCreationMessage?: { contextInfo?: PollContextInfo };
  pollCreationMessageV3?: { contextInfo?: PollContextInfo };
}

describe.each(dbKinds)('polls, end to end on the LID-first sandbox (%s)', (kind) => {
  let sandbox: Sandbox;
  let database: TestDatabase;
  let receiver: Receiver;
  let app: TestApp;
  let key: string;
  let sessionId: string;

  /** The service on this test's database: a second call after close() is a restart on the same data. */
  const start = () =>
    startTestApp(
      kind,
      { WEBHOOK_ALLOW_PRIVATE: true, WEBHOOK_POLL_MS: 100 },
      { target: { sandbox: sandboxAddress(sandbox) }, sessionTuning: { backoffBaseMs: 100, backoffMaxMs: 1_000 } },
      { existing: database },
    );
  const call = (method: string, path: string, body?: unknown) => http(app.baseUrl, method, path, { key, body });
  const S = () => `/v1/sessions/${sessionId}`;
  const jid = (n: string) => `${n}@s.whatsapp.net`;
  const lid = (n: string) => sandbox.control.phone(n).lid;
  const hooks = () => receiver.received.filter((r) => r.payload.type === 'poll.vote').map((r) => r.payload.data as Json);

  /** Sends a poll and waits for it to be SENT: the record, with the network id the phones know it by. */
  const sendPoll = async (body: Record<string, unknown>): Promise<Json> => {
    const res = await call('POST', `${S()}/messages/poll`, body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, id: expect.any(String) });
    return (
      await waitUntil(
        () => call('GET', `${S()}/messages/${res.body.id}`),
        (r) => r.body.status === 'SENT',
      )
    ).body;
  };
  const pollAt = (number: string, waMessageId: string) =>
    waitUntil(
      async () => sandbox.control.inbox(number).find((e) => e.id === waMessageId),
      (e) => e !== undefined,
    ) as Promise<InboxEntry>;
  /** A phone votes; resolves with the poll.vote webhook the vote raised. */
  const vote = async (number: string, to: string, pollWaMessageId: string, options: string[]): Promise<Json> => {
    const before = hooks().length;
    const { id } = await sandbox.control.vote(number, to, pollWaMessageId, options);
    const after = await waitUntil(
      async () => hooks(),
      (h) => h.length === before + 1,
    );
    expect(after[before].waMessageId).toBe(id);
    return after[before];
  };
  const tally = async (messageId: string) => {
    const res = await call('GET', `${S()}/messages/${messageId}/poll`);
    expect(res.status).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    sandbox = await startSandbox();
    database = await createTestDatabase(kind);
    receiver = await startReceiver();
    app = await start();
    key = (await app.newAccount()).apiKey;
    sessionId = await linkSession({ app, sandbox, key }, ME);
    sandbox.control.addPhone(BOB, 'Bob');
    sandbox.control.addPhone(CAROL, 'Carol');
    const hook = await call('POST', '/v1/webhooks', { url: receiver.url, events: ['poll.vote'] });
    expect(hook.status).toBe(201);
    receiver.verifyWith(hook.body.secret);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await database?.drop();
    await sandbox?.close();
    await receiver?.close();
  });

  it('sends a single-choice poll: the phone decrypts its question, options, selectableCount and secret', async () => {
    const record = await sendPoll({ to: BOB, name: 'Lunch?', options: ['Pizza', 'Sushi', 'Salad'] });
    expect(record).toMatchObject({ toNumber: jid(BOB), content: 'Lunch?', status: 'SENT' });
    // the spec's record, as docs/messages.md says: no field names its kind (GraphQL's OutgoingMessage.kind does)
    expect(record).not.toHaveProperty('kind');
    const entry = await pollAt(BOB, record.waMessageId);
    expect(entry).toMatchObject({
      kind: 'poll',
      content: 'Lunch?',
      poll: { name: 'Lunch?', options: ['Pizza', 'Sushi', 'Salad'], selectableCount: 1 },
    });
    const raw = entry.raw as RawPoll;
    // A single choice goes out as WhatsApp's V3 creation message, with the 32-byte secret votes are sealed with.
    expect(raw.pollCreationMessageV3).toBeDefined();
    expect(raw.messageContextInfo?.messageSecret?.length).toBe(32);
    expect(await tally(record.id)).toEqual({
      ok: true,
      poll: {
        name: 'Lunch?',
        selectableCount: 1,
        options: [
          { name: 'Pizza', votes: 0, voters: [] },
          { name: 'Sushi', votes: 0, voters: [] },
          { name: 'Salad', votes: 0, voters: [] },
        ],
        totalVoters: 0,
      },
    });

    const hook = await vote(BOB, ME, record.waMessageId, ['Sushi']);
    expect(hook).toEqual({
      sessionId,
      messageId: record.id,
      pollWaMessageId: record.waMessageId,
      waMessageId: expect.any(String),
      chatId: jid(BOB),
      voter: jid(BOB),
      voterLid: lid(BOB),
      selectedOptions: ['Sushi'],
      at: expect.stringMatching(/Z$/),
      receivedAt: expect.stringMatching(/Z$/),
    });
    expect((await tally(record.id)).poll.options).toEqual([
      { name: 'Pizza', votes: 0, voters: [] },
      { name: 'Sushi', votes: 1, voters: [jid(BOB)] },
      { name: 'Salad', votes: 0, voters: [] },
    ]);
    // The vote is an incoming item too, naming the poll (its choice is only in the event and the tally).
    const incoming = await call('GET', `${S()}/incoming?limit=100`);
    expect(incoming.body.items.filter((i: Json) => i.type === 'poll_vote')).toEqual([
      expect.objectContaining({ type: 'poll_vote', content: record.waMessageId, from: jid(BOB), fromLid: lid(BOB) }),
    ]);
  });

  it('a multiple-choice poll in a group: two members vote, one changes the vote, the tally holds the latest of each', async () => {
    const group = await call('POST', `${S()}/groups`, { subject: 'Poll group', participants: [BOB, CAROL] });
    expect(group.status).toBe(200);
    const groupId: string = group.body.id;
    const record = await sendPoll({ to: groupId, isGroup: true, name: 'Which days?', options: ['Mon', 'Tue', 'Wed'], selectableCount: 0 });
    for (const member of [BOB, CAROL]) {
      const entry = await pollAt(member, record.waMessageId);
      expect(entry).toMatchObject({
        chat: groupId,
        kind: 'poll',
        poll: { name: 'Which days?', options: ['Mon', 'Tue', 'Wed'], selectableCount: 0 },
      });
      expect((entry.raw as RawPoll).pollCreationMessage).toBeDefined();
    }

    const bob = await vote(BOB, groupId, record.waMessageId, ['Mon', 'Wed']);
    expect(bob).toMatchObject({
      messageId: record.id,
      chatId: groupId,
      voter: jid(BOB),
      voterLid: lid(BOB),
      selectedOptions: ['Mon', 'Wed'],
    });
    const carol = await vote(CAROL, groupId, record.waMessageId, ['Wed']);
    expect(carol).toMatchObject({ voter: jid(CAROL), selectedOptions: ['Wed'] });
    // Options come back in the poll's order, whatever order the voter picked them in.
    const changed = await vote(BOB, groupId, record.waMessageId, ['Tue', 'Mon']);
    expect(changed).toMatchObject({ voter: jid(BOB), selectedOptions: ['Mon', 'Tue'] });

    expect(await tally(record.id)).toEqual({
      ok: true,
      poll: {
        name: 'Which days?',
        selectableCount: 0,
        options: [
          { name: 'Mon', votes: 1, voters: [jid(BOB)] },
          { name: 'Tue', votes: 1, voters: [jid(BOB)] },
          { name: 'Wed', votes: 1, voters: [jid(CAROL)] },
        ],
        totalVoters: 2,
      },
    });
    const rows = await app.db.pollVote.findMany({ where: { messageId: record.id }, orderBy: { voter: 'asc' } });
    expect(rows.map((r) => [r.voter, r.voterLid, JSON.parse(r.options)])).toEqual([
      [jid(BOB), lid(BOB), ['Mon', 'Tue']],
      [jid(CAROL), lid(CAROL), ['Wed']],
    ]);

    // An empty vote withdraws it: the voter no longer counts.
    const withdrawn = await vote(CAROL, groupId, record.waMessageId, []);
    expect(withdrawn).toMatchObject({ voter: jid(CAROL), selectedOptions: [] });
    const after = await tally(record.id);
    expect(after.poll.options[2]).toEqual({ name: 'Wed', votes: 0, voters: [] });
    expect(after.poll.totalVoters).toBe(1);

    // GraphQL: the same tally on the message record.
    const q = await gql(
      app.baseUrl,
      key,
      'query($s: ID!, $id: ID!) { message(sessionId: $s, id: $id) { poll { name selectableCount totalVoters options { name votes voters } } } }',
      {
        s: sessionId,
        id: record.id,
      },
    );
    expect(q.errors).toBeUndefined();
    expect(q.data.message.poll).toEqual(after.poll);
  });

  it('sends a poll over GraphQL and pushes each vote to the pollVotes subscription', async () => {
    const sent = await gql(app.baseUrl, key, 'mutation($s: ID!, $in: PollInput!) { sendPoll(sessionId: $s, input: $in) { ok id } }', {
      s: sessionId,
      in: { to: CAROL, name: 'Tea or coffee?', options: ['Tea', 'Coffee'] },
    });
    expect(sent.errors).toBeUndefined();
    const id: string = sent.data.sendPoll.id;
    const record = (
      await waitUntil(
        () => call('GET', `${S()}/messages/${id}`),
        (r) => r.body.status === 'SENT',
      )
    ).body;
    await pollAt(CAROL, record.waMessageId);

    const client = graphqlWs(app.baseUrl, key);
    const pushed: Json[] = [];
    const subscribed = new Promise<void>((resolve) => {
      client.on('connected', () => setTimeout(resolve, 200));
    });
    const stop = client.subscribe(
      {
        query:
          'subscription($s: ID!) { pollVotes(sessionId: $s) { sessionId messageId pollWaMessageId waMessageId chatId voter voterLid selectedOptions } }',
        variables: { s: sessionId },
      },
      { next: (msg) => pushed.push(msg.data?.pollVotes), error: () => undefined, complete: () => undefined },
    );
    try {
      await subscribed;
      const cast = await vote(CAROL, ME, record.waMessageId, ['Coffee']);
      const [update] = await waitUntil(
        async () => pushed.filter((p) => p?.messageId === id),
        (found) => found.length === 1,
      );
      expect(update).toEqual({
        sessionId,
        messageId: id,
        pollWaMessageId: record.waMessageId,
        waMessageId: cast.waMessageId,
        chatId: jid(CAROL),
        voter: jid(CAROL),
        voterLid: lid(CAROL),
        selectedOptions: ['Coffee'],
      });
    } finally {
      stop();
      await client.dispose();
    }
  });

  it('sends a poll as a reply (REST and GraphQL, 1:1 and group): the phone decrypts the quote, and votes still count', async () => {
    const asked = await sandbox.control.sendText(BOB, ME, 'when shall we meet?');
    // the service must have received it to quote it
    await waitUntil(
      () => call('GET', `${S()}/incoming?limit=100&consume=false`),
      (r) => r.body.items.some((i: Json) => i.waMessageId === asked.id),
    );
    const record = await sendPoll({ to: BOB, name: 'Pick a day', options: ['Sat', 'Sun'], quotedMessageId: asked.id });
    const entry = await pollAt(BOB, record.waMessageId);
    expect(entry).toMatchObject({ kind: 'poll', poll: { name: 'Pick a day', options: ['Sat', 'Sun'], selectableCount: 1 } });
    const context = (entry.raw as RawPoll).pollCreationMessageV3?.contextInfo;
    expect(context?.stanzaId).toBe(asked.id);
    expect([jid(BOB), lid(BOB)]).toContain(context?.participant);
    expect(context?.quotedMessage?.conversation ?? context?.quotedMessage?.extendedTextMessage?.text).toBe('when shall we meet?');
    // kept in the record's payload, so a send resumed after a crash is the same reply
    const row = await app.db.outgoingMessage.findUniqueOrThrow({ where: { id: record.id } });
    expect(JSON.parse(row.payload).quoted.key.id).toBe(asked.id);
    expect(await vote(BOB, ME, record.waMessageId, ['Sun'])).toMatchObject({ messageId: record.id, selectedOptions: ['Sun'] });

    // GraphQL, a multiple choice in a group quoting our own poll
    const group = await call('POST', `${S()}/groups`, { subject: 'Reply poll group', participants: [BOB, CAROL] });
    const groupId: string = group.body.id;
    const sent = await gql(app.baseUrl, key, 'mutation($s: ID!, $in: PollInput!) { sendPoll(sessionId: $s, input: $in) { ok id } }', {
      s: sessionId,
      in: { to: groupId, name: 'And the time?', options: ['10:00', '14:00'], selectableCount: 0, quotedMessageId: record.id },
    });
    expect(sent.errors).toBeUndefined();
    const groupRecord = (
      await waitUntil(
        () => call('GET', `${S()}/messages/${sent.data.sendPoll.id}`),
        (r) => r.body.status === 'SENT',
      )
    ).body;
    for (const member of [BOB, CAROL]) {
      const polled = await pollAt(member, groupRecord.waMessageId);
      const quoted = (polled.raw as RawPoll).pollCreationMessage?.contextInfo;
      expect(quoted).toMatchObject({ stanzaId: record.waMessageId, participant: jid(ME) });
      expect(quoted?.quotedMessage?.pollCreationMessageV3?.name).toBe('Pick a day');
    }

    // an unknown quote is a 404 and a bad one a 400, and no poll is sent
    const before = sandbox.control.inbox(BOB).length;
    const unknown = await call('POST', `${S()}/messages/poll`, {
      to: BOB,
      name: 'x',
      options: ['a', 'b'],
      quotedMessageId: '3EB0FFFFFFFFFFFFFFFFFD',
    });
    expect({ status: unknown.status, code: unknown.body.error.code }).toEqual({ status: 404, code: 'NOT_FOUND' });
    const bad = await call('POST', `${S()}/messages/poll`, { to: BOB, name: 'x', options: ['a', 'b'], quotedMessageId: 'no way' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { path: string }) => d.path)).toEqual(['quotedMessageId']);
    await new Promise((r) => setTimeout(r, 300));
    expect(sandbox.control.inbox(BOB).length).toBe(before);
    expect(await app.db.outgoingMessage.count({ where: { sessionId, content: 'x' } })).toBe(0);
  });

  it('keeps the tally and the poll secret across a restart: a vote after it still decrypts', async () => {
    const record = await sendPoll({ to: BOB, name: 'Restart?', options: ['Yes', 'No'] });
    await pollAt(BOB, record.waMessageId);
    await vote(BOB, ME, record.waMessageId, ['No']);

    await app.close();
    app = await start();
    // As main.ts does at start: the sessions that were linked re-link from their stored keys.
    await app.deps.sessions.markRelinking();
    await app.deps.sessions.resumeAll();
    await waitUntil(
      () => call('GET', `${S()}/status`),
      (r) => r.body.status === 'CONNECTED',
      30_000,
    );
    expect((await tally(record.id)).poll.options).toEqual([
      { name: 'Yes', votes: 0, voters: [] },
      { name: 'No', votes: 1, voters: [jid(BOB)] },
    ]);
    const hook = await vote(BOB, ME, record.waMessageId, ['Yes']);
    expect(hook).toMatchObject({ messageId: record.id, selectedOptions: ['Yes'] });
    expect(await tally(record.id)).toEqual({
      ok: true,
      poll: {
        name: 'Restart?',
        selectableCount: 1,
        options: [
          { name: 'Yes', votes: 1, voters: [jid(BOB)] },
          { name: 'No', votes: 0, voters: [] },
        ],
        totalVoters: 1,
      },
    });
  }, 60_000);

  it('refuses bad polls with a 400 listing each fault, and sends nothing', async () => {
    const before = await app.db.outgoingMessage.count({ where: { sessionId } });
    const inboxBefore = sandbox.control.inbox(BOB).length;
    const bad = async (body: Record<string, unknown>, details: Array<{ path: string; message: string }>) => {
      const res = await call('POST', `${S()}/messages/poll`, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ ok: false, error: { code: 'VALIDATION_FAILED', message: 'The request is not valid', details } });
    };
    await bad({ to: BOB, name: 'One?', options: ['Only'] }, [{ path: 'options', message: 'must list at least 2 options' }]);
    await bad({ to: BOB, name: 'Many?', options: Array.from({ length: 13 }, (_, i) => `Option ${i + 1}`) }, [
      { path: 'options', message: 'must list at most 12 options' },
    ]);
    await bad({ to: BOB, name: 'Twice?', options: ['A', 'B', 'A'] }, [
      { path: 'options[2]', message: 'repeats options[0]; options must differ' },
    ]);
    await bad({ to: BOB, name: 'Too many choices?', options: ['A', 'B'], selectableCount: 3 }, [
      { path: 'selectableCount', message: 'must be at most the number of options (2); 0 allows any number' },
    ]);
    await bad({ to: BOB, name: '', options: ['A', ''] }, [
      { path: 'name', message: 'cannot be empty' },
      { path: 'options[1]', message: 'cannot be empty' },
    ]);
    const graph = await gql(app.baseUrl, key, 'mutation($s: ID!, $in: PollInput!) { sendPoll(sessionId: $s, input: $in) { ok id } }', {
      s: sessionId,
      in: { to: BOB, name: 'One?', options: ['Only'] },
    });
    expect(graph.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
    await new Promise((r) => setTimeout(r, 300));
    expect(await app.db.outgoingMessage.count({ where: { sessionId } })).toBe(before);
    expect(sandbox.control.inbox(BOB).length).toBe(inboxBefore);
  });

  it('answers 404 for an unknown message and 409 CONFLICT for a message that is not a poll', async () => {
    const unknown = await call('GET', `${S()}/messages/${crypto.randomUUID()}/poll`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'Message not found' } });
    const text = await call('POST', `${S()}/send`, { to: BOB, message: 'not a poll' });
    const res = await call('GET', `${S()}/messages/${text.body.id}/poll`);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ ok: false, error: { code: 'CONFLICT', message: 'This message is not a poll, so it has no votes' } });
    const q = await gql(app.baseUrl, key, 'query($s: ID!, $id: ID!) { message(sessionId: $s, id: $id) { poll { name } } }', {
      s: sessionId,
      id: text.body.id,
    });
    expect(q.data.message.poll).toBeNull();
  });
});
