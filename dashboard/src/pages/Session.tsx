import { useEffect, useState } from 'react';
import type { ReactNode } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import {
  CancelQueuedMessage,
  DeleteMessage,
  IncomingMessages,
  MessagesQuery,
  PollTallyQuery,
  ReactToMessage,
  SendInteractive,
  SendMedia,
  SendQueueQuery,
  SendText,
  SessionQuery,
} from '../api.ts';
import { PAGE_SIZES } from '../page-sizes.ts';
import type { IncomingMessagesSubscription, MessageStatus, SendFieldsFragment } from '../generated/graphql.ts';
import { ReceivedMedia } from '../media.tsx';
import { href } from '../route.ts';
import { ConfirmButton, ErrorBox, Field, formatTime, Section, Select, StatusBadge, TableWrap } from '../ui.tsx';
import { SessionControls } from './Sessions.tsx';

type Incoming = IncomingMessagesSubscription['incomingMessages'];

/** A message the send form answers: its record id (ours) or network id (received), its chat and text. */
interface ReplyTarget {
  ref: string;
  to: string;
  content: string;
}

const REACTIONS = ['👍', '❤️', '😂'];

/** A JID that may wrap before its server part, as an email address does, instead of widening its column. */
const Jid = ({ jid }: { jid: string }) => {
  const at = jid.indexOf('@');
  if (at < 0) return <>{jid}</>;
  return (
    <>
      {jid.slice(0, at)}
      <wbr />
      {jid.slice(at)}
    </>
  );
};

/** React to a message (ours by record id, a received one by waMessageId) and start a reply to it. */
const MessageActions = ({
  sessionId,
  target,
  onReply,
  children,
}: {
  sessionId: string;
  target: ReplyTarget;
  onReply: (target: ReplyTarget) => void;
  children?: ReactNode;
}) => {
  const [reacted, react] = useMutation(ReactToMessage);
  const short = target.content.length > 30 ? `${target.content.slice(0, 30)}…` : target.content;
  return (
    <div className="message-actions">
      {REACTIONS.map((emoji) => (
        <button
          key={emoji}
          type="button"
          className="small"
          aria-label={`React ${emoji} to “${short}”`}
          onClick={() => void react({ sessionId, messageId: target.ref, emoji })}
        >
          {emoji}
        </button>
      ))}
      <button type="button" className="small" aria-label={`Reply to “${short}”`} onClick={() => onReply(target)}>
        Reply
      </button>
      {children}
      {reacted.data ? (
        <span role="status" className="muted">
          You reacted {reacted.data.reactToMessage.emoji}
        </span>
      ) : null}
      <ErrorBox error={reacted.error} />
    </div>
  );
};

const SendForms = ({ sessionId, replyTo, onReplyDone }: { sessionId: string; replyTo: ReplyTarget | null; onReplyDone: () => void }) => {
  const [kind, setKind] = useState('text');
  const [to, setTo] = useState('');
  // A reply is a text to the chat of the message it quotes.
  useEffect(() => {
    if (!replyTo) return;
    setKind('text');
    setTo(replyTo.to);
  }, [replyTo]);
  const [text, setText] = useState('');
  const [url, setUrl] = useState('');
  const [buttons, setButtons] = useState('Yes, No');
  const [textState, sendText] = useMutation(SendText);
  const [mediaState, sendMedia] = useMutation(SendMedia);
  const [buttonState, sendButtons] = useMutation(SendInteractive);
  const [sent, setSent] = useState<SendFieldsFragment | null>(null);
  const state = kind === 'text' ? textState : kind === 'image' ? mediaState : buttonState;
  const context = { additionalTypenames: ['OutgoingMessage'] };
  return (
    <Section title="Send">
      {replyTo ? (
        <p className="replying">
          Replying to “{replyTo.content}”{' '}
          <button type="button" className="small" onClick={onReplyDone}>
            Cancel reply
          </button>
        </p>
      ) : null}
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setSent(null);
          const target = to.trim();
          let answer: SendFieldsFragment | undefined;
          if (kind === 'text') {
            const quoted = replyTo ? { quotedMessageId: replyTo.ref } : {};
            answer = (await sendText({ sessionId, to: target, message: text, ...quoted }, context)).data?.sendText;
            if (answer) onReplyDone();
          } else if (kind === 'image') {
            const input = { to: target, url: url.trim(), mediaType: 'image' as const, ...(text ? { caption: text } : {}) };
            answer = (await sendMedia({ sessionId, input }, context)).data?.sendMedia;
          } else {
            const list = buttons
              .split(',')
              .map((b) => b.trim())
              .filter(Boolean)
              .map((b) => ({ type: 'reply' as const, text: b }));
            answer = (await sendButtons({ sessionId, input: { chatId: target, body: text, buttons: list } }, context)).data
              ?.sendInteractive;
          }
          if (answer) setSent(answer);
        }}
      >
        <Select
          label="Kind"
          value={kind}
          onChange={setKind}
          options={[
            ['text', 'Text'],
            ['image', 'Image by URL'],
            ['buttons', 'Buttons'],
          ]}
        />
        <Field label="To (phone number or JID)" name="to" value={to} onChange={setTo} placeholder="15551234567" required />
        {kind === 'image' ? <Field label="Image URL" name="url" type="url" value={url} onChange={setUrl} required /> : null}
        <div className="field">
          <label htmlFor="send-text">{kind === 'image' ? 'Caption' : kind === 'buttons' ? 'Body' : 'Message'}</label>
          <textarea id="send-text" name="message" value={text} onChange={(e) => setText(e.currentTarget.value)} rows={3} />
        </div>
        {kind === 'buttons' ? <Field label="Reply buttons (comma-separated)" value={buttons} onChange={setButtons} /> : null}
        <button type="submit" className="primary">
          Send
        </button>
        {sent ? (
          <p role="status" className="ok">
            {/* Only a send the pacer held is queued; any other went at once. */}
            {sent.queued ? `Queued as ${sent.id}: it goes at ${formatTime(sent.sendAt)}` : `Sent as ${sent.id}`}
          </p>
        ) : null}
        <ErrorBox error={state.error} />
      </form>
    </Section>
  );
};

interface PollTally {
  selectableCount: number;
  totalVoters: number;
  options: Array<{ name: string; votes: number }>;
}

/** A poll's tally, read on its own: in the history's query it would cost every row of the page. */
const PollOf = ({ sessionId, id }: { sessionId: string; id: string }) => {
  const [tally] = useQuery({ query: PollTallyQuery, context: MESSAGE_LIST, variables: { sessionId, id } });
  const poll = tally.data?.message.poll;
  return poll ? <PollResults poll={poll} /> : null;
};

/** A poll's current tally under its question: each option with its votes. */
const PollResults = ({ poll }: { poll: PollTally }) => (
  <div className="poll">
    <span className="muted">
      Poll, {poll.selectableCount === 1 ? 'one choice' : 'several choices'}: {poll.totalVoters}{' '}
      {poll.totalVoters === 1 ? 'voter' : 'voters'}
    </span>
    <ul>
      {poll.options.map((o) => (
        <li key={o.name}>
          {o.name}: {o.votes} {o.votes === 1 ? 'vote' : 'votes'}
        </li>
      ))}
    </ul>
  </div>
);

// An empty list names no type, so urql is told which mutations make it stale.
const MESSAGE_LIST = { additionalTypenames: ['OutgoingMessage'] };

/** Deletes one of our sent messages for everyone, after a confirmation. */
const DeleteForEveryone = ({ sessionId, id, content }: { sessionId: string; id: string; content: string }) => {
  const [deleted, remove] = useMutation(DeleteMessage);
  return (
    <>
      <ConfirmButton
        label="Delete for everyone"
        question={`Delete “${content.length > 30 ? `${content.slice(0, 30)}…` : content}” for everyone?`}
        onConfirm={() => void remove({ sessionId, id }, MESSAGE_LIST)}
      />
      <ErrorBox error={deleted.error} />
    </>
  );
};

const History = ({ sessionId, onReply }: { sessionId: string; onReply: (target: ReplyTarget) => void }) => {
  const [status, setStatus] = useState('');
  const [to, setTo] = useState('');
  const [limit, setLimit] = useState<number>(PAGE_SIZES.messages);
  const [messages, refetch] = useQuery({
    query: MessagesQuery,
    context: MESSAGE_LIST,
    variables: { sessionId, first: limit, ...(status ? { status: status as MessageStatus } : {}), ...(to.trim() ? { to: to.trim() } : {}) },
  });
  const connection = messages.data?.session.messages;
  const items = connection?.edges.map((e) => e.node) ?? [];
  return (
    <Section title="Outgoing messages">
      <div className="inline">
        <Select
          label="Status"
          value={status}
          onChange={setStatus}
          options={[
            ['', 'Any'],
            ['PENDING', 'Pending'],
            ['SENT', 'Sent'],
            ['FAILED', 'Failed'],
          ]}
        />
        <Field label="To" value={to} onChange={setTo} placeholder="15551234567" />
        <button type="button" onClick={() => refetch({ requestPolicy: 'network-only' })}>
          Refresh
        </button>
      </div>
      <ErrorBox error={messages.error} />
      <TableWrap label="Outgoing messages table">
        <table>
          <caption className="sr-only">Outgoing messages, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Message</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {items.map((m) => (
              <tr key={m.id} data-message-id={m.id}>
                <td className="content">
                  <div className="to">
                    To <Jid jid={m.toNumber} />
                  </div>
                  {m.content}
                  {m.kind === 'poll' ? <PollOf sessionId={sessionId} id={m.id} /> : null}
                  {m.status === 'SENT' && !m.deletedAt ? (
                    <MessageActions sessionId={sessionId} target={{ ref: m.id, to: m.toNumber, content: m.content }} onReply={onReply}>
                      <DeleteForEveryone sessionId={sessionId} id={m.id} content={m.content} />
                    </MessageActions>
                  ) : null}
                </td>
                <td>
                  <StatusBadge status={m.status} />
                  {m.error ? <div className="last-error">{m.error}</div> : null}
                  <div className="muted">Created {formatTime(m.createdAt)}</div>
                  {m.deliveredAt ? <div className="muted">Delivered {formatTime(m.deliveredAt)}</div> : null}
                  {m.readAt ? <div className="muted">Read {formatTime(m.readAt)}</div> : null}
                  {m.playedAt ? <div className="muted">Played {formatTime(m.playedAt)}</div> : null}
                  {m.deletedAt ? <div className="muted">Deleted for everyone {formatTime(m.deletedAt)}</div> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <p>
        Showing {items.length}
        {connection?.pageInfo.hasNextPage && limit < PAGE_SIZES.messagesShown ? (
          <button type="button" onClick={() => setLimit(Math.min(limit + PAGE_SIZES.messages, PAGE_SIZES.messagesShown))}>
            Show more
          </button>
        ) : null}
        {connection?.pageInfo.hasNextPage && limit >= PAGE_SIZES.messagesShown ? (
          <span className="muted"> (the newest {PAGE_SIZES.messagesShown}; filter by status or recipient for others)</span>
        ) : null}
      </p>
    </Section>
  );
};

const HEALTH_TEXT: Record<string, string> = {
  ok: 'Sending normally',
  paused: 'Paused: the network answered rate-overlimit',
  restricted: 'Restricted: new chats are refused',
  banned: 'Banned',
};

/** The session's sending health and its send queue (paced and scheduled messages), each cancellable. */
const SendQueue = ({ sessionId }: { sessionId: string }) => {
  const [queue, refetch] = useQuery({ query: SendQueueQuery, context: MESSAGE_LIST, variables: { sessionId, first: PAGE_SIZES.queue } });
  const [cancelState, cancel] = useMutation(CancelQueuedMessage);
  const health = queue.data?.session.health;
  const items = queue.data?.session.queue.edges.map((e) => e.node) ?? [];
  return (
    <Section title="Send queue">
      <ErrorBox error={queue.error ?? cancelState.error} />
      {health ? (
        <p role="status" data-health={health.state}>
          {HEALTH_TEXT[health.state] ?? health.state}
          {health.pausedUntil ? ` until ${formatTime(health.pausedUntil)}` : ''}. {health.queueLength} waiting
          {health.rateAnswers > 0 ? `, ${health.rateAnswers} rate answers so far` : ''}.
          {health.reason && health.state !== 'ok' ? <span className="last-error"> {health.reason}</span> : null}
        </p>
      ) : null}
      <button type="button" onClick={() => refetch({ requestPolicy: 'network-only' })}>
        Refresh queue
      </button>
      {items.length > 0 ? (
        <TableWrap label="Send queue table">
          <table>
            <caption className="sr-only">Messages waiting to be sent, in the order they go</caption>
            <thead>
              <tr>
                <th scope="col">To</th>
                <th scope="col">Content</th>
                <th scope="col">Goes at</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {items.map((m) => (
                <tr key={m.id} data-queued-id={m.id}>
                  <td>{m.toNumber}</td>
                  <td className="content">{m.content}</td>
                  <td>{m.sendAt ? formatTime(m.sendAt) : 'now'}</td>
                  <td>
                    <button type="button" onClick={() => cancel({ sessionId, messageId: m.id }, MESSAGE_LIST)}>
                      Cancel
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : (
        <p>Nothing waiting.</p>
      )}
    </Section>
  );
};

const IncomingFeed = ({ sessionId, onReply }: { sessionId: string; onReply: (target: ReplyTarget) => void }) => {
  const [feed] = useSubscription(
    { query: IncomingMessages, variables: { sessionId } },
    (previous: Incoming[] = [], event: IncomingMessagesSubscription) => [event.incomingMessages, ...previous].slice(0, 200),
  );
  return (
    <Section title="Incoming (live)">
      <ErrorBox error={feed.error} />
      {(feed.data ?? []).length === 0 ? <p>Waiting for messages… new ones appear here as they arrive.</p> : null}
      <ul className="feed" aria-live="polite">
        {(feed.data ?? []).map((m) => (
          <li key={m.eventId} data-event-id={m.eventId}>
            <span className="from">{m.pushName || m.from}</span> <span className="when">{formatTime(m.receivedAt)}</span>
            {m.media ? <ReceivedMedia media={m.media} type={m.type} from={m.pushName || m.from} /> : null}
            {m.content || !m.media ? <div className="content">{m.content || `(${m.type})`}</div> : null}
            {m.type !== 'reaction' && m.type !== 'edit' && m.type !== 'revoke' ? (
              <MessageActions sessionId={sessionId} target={{ ref: m.waMessageId, to: m.from, content: m.content }} onReply={onReply} />
            ) : null}
          </li>
        ))}
      </ul>
    </Section>
  );
};

export const SessionPage = ({ id }: { id: string }) => {
  const [session] = useQuery({ query: SessionQuery, variables: { id } });
  const [replyTo, setReplyTo] = useState<ReplyTarget | null>(null);
  const s = session.data?.session;
  return (
    <>
      <p>
        <a href={href('sessions')}>← All sessions</a>
      </p>
      <h1>Session {s?.sessionName ?? ''}</h1>
      <p>
        <a href={href('sessions', id, 'inbox')}>Inbox: chats and conversations</a>
      </p>
      <ErrorBox error={session.error} />
      {s ? (
        <div className="columns">
          <div>
            <SessionControls initial={s} />
            <SendForms sessionId={id} replyTo={replyTo} onReplyDone={() => setReplyTo(null)} />
            <SendQueue sessionId={id} />
            <IncomingFeed sessionId={id} onReply={setReplyTo} />
          </div>
          <History sessionId={id} onReply={setReplyTo} />
        </div>
      ) : null}
    </>
  );
};
