import { useCallback, useEffect, useId, useLayoutEffect, useRef, useState } from 'react';
import type { CombinedError } from 'urql';
import { useClient, useMutation, useQuery } from 'urql';
import {
  ChatsQuery,
  ChatUpdates,
  MarkChatRead,
  QuotedMessageQuery,
  SearchMessagesQuery,
  SendText,
  ThreadQuery,
  ThreadUpdates,
} from '../api.ts';
import type { ChatFieldsFragment, SearchMessagesQuery as SearchResult, ThreadMessageFieldsFragment } from '../generated/graphql.ts';
import { ReceivedMedia } from '../media.tsx';
import { PAGE_SIZES } from '../page-sizes.ts';
import { href } from '../route.ts';
import { ErrorBox, formatTime, Section } from '../ui.tsx';

type Chat = ChatFieldsFragment;
type Message = ThreadMessageFieldsFragment;
type Found = SearchResult['session']['searchMessages']['edges'][number]['node'];

/** The number of a JID (`15551234567@s.whatsapp.net` → `15551234567`), the way a person reads it. */
const shortJid = (jid: string): string => jid.split('@')[0] ?? jid;

const chatTitle = (chat: Pick<Chat, 'id' | 'name'>): string => chat.name ?? shortJid(chat.id);

/** A message's latest text as a list or a quote shows it. */
const textOf = (m: { kind: string; text?: string | null; editedText?: string | null; deletedAt?: string | null }): string => {
  if (m.deletedAt) return 'This message was deleted';
  return m.editedText ?? m.text ?? `[${m.kind}]`;
};

const clip = (text: string, max = 40): string => (text.length > max ? `${text.slice(0, max)}…` : text);

/** Today's times as the hour, older ones as the date. */
const shortTime = (value: string): string => {
  const at = new Date(value);
  return at.toDateString() === new Date().toDateString()
    ? at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : at.toLocaleDateString();
};

/** Latest activity first, as the service orders them. */
const byActivity = (a: Chat, b: Chat): number => b.lastActivity.localeCompare(a.lastActivity) || a.id.localeCompare(b.id);

/** Oldest first: the thread reads down to its newest message. */
const byTime = (a: Message, b: Message): number => a.timestamp.localeCompare(b.timestamp) || a.id.localeCompare(b.id);

/** What became of a message we sent, by its receipts. */
const receiptText = (m: Message): string | null => {
  const r = m.receipts;
  if (!r) return null;
  if (r.status === 'FAILED') return 'Failed';
  if (r.status === 'PENDING') return 'Sending';
  if (r.playedAt) return 'Played';
  if (r.readAt) return 'Read';
  if (r.deliveredAt) return 'Delivered';
  return 'Sent';
};

/* ---------------------------------------------------------------- chat list */

const ChatItem = ({ sessionId, chat, open }: { sessionId: string; chat: Chat; open: boolean }) => {
  const last = chat.lastMessage;
  return (
    <li data-chat-id={chat.id} data-unread={chat.unreadCount} className={open ? 'open' : undefined}>
      <a href={href('sessions', sessionId, 'inbox', chat.id)} aria-current={open ? 'true' : undefined}>
        <span className="chat-top">
          <span className="chat-name">{chatTitle(chat)}</span>
          <span className="muted">{shortTime(chat.lastActivity)}</span>
        </span>
        <span className="chat-bottom">
          <span className="chat-preview">
            {last ? `${last.fromMe ? 'You: ' : ''}${textOf(last)}` : <span className="muted">No messages stored</span>}
          </span>
          {chat.unreadCount > 0 ? (
            <span className="unread" data-testid="unread">
              {chat.unreadCount}
              <span className="sr-only"> unread</span>
            </span>
          ) : null}
        </span>
      </a>
    </li>
  );
};

/** Search over the session's stored messages (Session.searchMessages); a result opens its chat. */
const Search = ({ sessionId }: { sessionId: string }) => {
  const client = useClient();
  const id = useId();
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<{ query: string; total: number; items: Found[] } | null>(null);
  const [error, setError] = useState<CombinedError | null>(null);
  return (
    <search className="search">
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const q = query.trim();
          if (!q) {
            setFound(null);
            return;
          }
          const answer = await client
            .query(SearchMessagesQuery, { sessionId, query: q, first: PAGE_SIZES.search }, { requestPolicy: 'network-only' })
            .toPromise();
          setError(answer.error ?? null);
          const result = answer.data?.session.searchMessages;
          setFound(result ? { query: q, total: result.totalCount, items: result.edges.map((edge) => edge.node) } : null);
        }}
      >
        <label htmlFor={id}>Search messages</label>
        <div className="inline">
          <input id={id} type="search" value={query} onChange={(e) => setQuery(e.currentTarget.value)} placeholder="Words or their start" />
          <button type="submit">Search</button>
        </div>
      </form>
      <ErrorBox error={error} />
      {found ? (
        <section aria-label="Search results">
          <p role="status">
            {found.total === 1 ? '1 message' : `${found.total} messages`} found for “{found.query}”
            {found.total > found.items.length ? ` (the newest ${found.items.length})` : ''}{' '}
            <button type="button" className="small" onClick={() => setFound(null)}>
              Clear
            </button>
          </p>
          <ul className="found">
            {found.items.map((m) => (
              <li key={m.id} data-found-id={m.id}>
                <a href={href('sessions', sessionId, 'inbox', m.chatId)}>
                  <span className="chat-top">
                    <span className="chat-name">{shortJid(m.chatId)}</span>
                    <span className="muted">{shortTime(m.timestamp)}</span>
                  </span>
                  <span className="chat-preview">
                    {m.fromMe ? 'You: ' : ''}
                    {m.text ?? `[${m.kind}]`}
                  </span>
                </a>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </search>
  );
};

/**
 * The session's chats, latest activity first, kept current by the chatUpdates subscription: a chat
 * that moves goes to the top with its unread count as the service counts it.
 */
const ChatList = ({ sessionId, openChat }: { sessionId: string; openChat: string | null }) => {
  const client = useClient();
  const [chats, setChats] = useState<Map<string, Chat>>(new Map());
  const [next, setNext] = useState<{ cursor: string | null; total: number } | null>(null);
  const [error, setError] = useState<CombinedError | null>(null);
  const merge = useCallback((list: Chat[]) => {
    setChats((current) => {
      const copy = new Map(current);
      for (const chat of list) copy.set(chat.id, chat);
      return copy;
    });
  }, []);
  const load = useCallback(
    async (after: string | null) => {
      const answer = await client
        .query(ChatsQuery, { sessionId, first: PAGE_SIZES.chats, ...(after ? { after } : {}) }, { requestPolicy: 'network-only' })
        .toPromise();
      setError(answer.error ?? null);
      const page = answer.data?.session.chats;
      if (!page) return;
      merge(page.edges.map((edge) => edge.node));
      setNext({ cursor: page.pageInfo.hasNextPage ? (page.pageInfo.endCursor ?? null) : null, total: page.totalCount });
    },
    [client, sessionId, merge],
  );
  useEffect(() => {
    setChats(new Map());
    void load(null);
    const { unsubscribe } = client.subscription(ChatUpdates, { sessionId }).subscribe((result) => {
      if (result.error) setError(result.error);
      if (result.data) merge([result.data.chatUpdates]);
    });
    return unsubscribe;
  }, [client, sessionId, load, merge]);
  const list = [...chats.values()].sort(byActivity);
  return (
    <Section title="Chats">
      <Search sessionId={sessionId} />
      <ErrorBox error={error} />
      {next && list.length === 0 ? <p>No chats yet: messages sent and received show here.</p> : null}
      <ul className="chat-list" aria-label="Chats, latest first">
        {list.map((chat) => (
          <ChatItem key={chat.id} sessionId={sessionId} chat={chat} open={chat.id === openChat} />
        ))}
      </ul>
      {next?.cursor ? (
        <button type="button" onClick={() => void load(next.cursor)}>
          More chats
        </button>
      ) : null}
    </Section>
  );
};

/* ---------------------------------------------------------------- thread */

/** The message a reply quotes: among those shown, else read on its own; one the store does not hold says so. */
const Quote = ({
  sessionId,
  quotedId,
  shown,
  nameOf,
}: {
  sessionId: string;
  quotedId: string;
  shown: Message | undefined;
  nameOf: (jid: string) => string;
}) => {
  const [read] = useQuery({ query: QuotedMessageQuery, variables: { sessionId, id: quotedId }, pause: shown !== undefined });
  const quoted = shown ?? read.data?.storedMessage;
  return (
    <blockquote className="quote" data-quoted-id={quotedId}>
      {quoted ? (
        <>
          <span className="sender">{quoted.fromMe ? 'You' : nameOf(quoted.sender)}</span> {clip(textOf(quoted), 80)}
        </>
      ) : (
        <span className="muted">{read.fetching ? 'Loading the quoted message…' : 'A message not stored here'}</span>
      )}
    </blockquote>
  );
};

const Bubble = ({
  sessionId,
  message,
  group,
  nameOf,
  quotedOf,
  onReply,
}: {
  sessionId: string;
  message: Message;
  group: boolean;
  /** a sender as the page names them */
  nameOf: (jid: string) => string;
  /** a message shown in the thread, by its network id */
  quotedOf: (waMessageId: string) => Message | undefined;
  onReply: (m: Message) => void;
}) => {
  const m = message;
  const receipt = receiptText(m);
  const from = m.fromMe ? 'You' : nameOf(m.sender);
  return (
    <li data-message-id={m.id} data-wa-id={m.waMessageId} className={`bubble ${m.fromMe ? 'out' : 'in'}`}>
      {group && !m.fromMe ? <div className="sender">{from}</div> : null}
      {m.quotedId ? <Quote sessionId={sessionId} quotedId={m.quotedId} shown={quotedOf(m.quotedId)} nameOf={nameOf} /> : null}
      {m.media && !m.deletedAt ? <ReceivedMedia media={m.media} type={m.kind} from={from} /> : null}
      {m.deletedAt ? (
        <p className="text deleted">This message was deleted</p>
      ) : m.editedText !== null || m.text !== null || !m.media ? (
        <p className="text">{textOf(m)}</p>
      ) : null}
      <div className="meta">
        <time dateTime={m.timestamp}>{formatTime(m.timestamp)}</time>
        {m.editedText !== null && !m.deletedAt ? <span> · edited</span> : null}
        {receipt ? <span data-receipt={receipt}> · {receipt}</span> : null}
      </div>
      {m.reactions.length > 0 ? (
        <ul className="reactions" aria-label="Reactions">
          {m.reactions.map((r) => (
            <li key={r.reactor} title={shortJid(r.reactor)}>
              {r.emoji}
              <span className="sr-only"> from {shortJid(r.reactor)}</span>
            </li>
          ))}
        </ul>
      ) : null}
      {m.deletedAt ? null : (
        <button type="button" className="small" aria-label={`Reply to “${clip(textOf(m), 30)}”`} onClick={() => onReply(m)}>
          Reply
        </button>
      )}
    </li>
  );
};

/** Sends a text to the chat (sendText), quoting a message when a reply was started. */
const ReplyBox = ({
  sessionId,
  chatId,
  quoting,
  onQuoteDone,
}: {
  sessionId: string;
  chatId: string;
  quoting: Message | null;
  onQuoteDone: () => void;
}) => {
  const [text, setText] = useState('');
  const [state, send] = useMutation(SendText);
  const box = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (quoting) box.current?.focus();
  }, [quoting]);
  return (
    <form
      className="reply-box"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!text.trim()) return;
        const quoted = quoting ? { quotedMessageId: quoting.waMessageId } : {};
        const answer = await send({ sessionId, to: chatId, message: text, ...quoted });
        if (answer.data) {
          setText('');
          onQuoteDone();
        }
      }}
    >
      {quoting ? (
        <p className="replying">
          Replying to “{clip(textOf(quoting), 60)}”{' '}
          <button type="button" className="small" onClick={onQuoteDone}>
            Cancel reply
          </button>
        </p>
      ) : null}
      <label htmlFor="reply-text">Message</label>
      <div className="reply-row">
        <textarea
          id="reply-text"
          ref={box}
          rows={2}
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => {
            // Enter sends, Shift+Enter starts a new line, as chat apps do.
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault();
              e.currentTarget.form?.requestSubmit();
            }
          }}
        />
        <button type="submit" className="primary" disabled={state.fetching}>
          Send
        </button>
      </div>
      {state.data?.sendText.queued ? (
        <p role="status" className="muted">
          Queued: it goes at {formatTime(state.data.sendText.sendAt)}
        </p>
      ) : null}
      <ErrorBox error={state.error} />
    </form>
  );
};

/**
 * One chat: its messages oldest to newest (the newest at the bottom), older pages on demand through
 * the cursor, new and changed messages (a reaction, an edit, a delete, a receipt) as the
 * storedMessageUpdates subscription pushes them. Opening it marks it read.
 */
const Thread = ({ sessionId, chatId }: { sessionId: string; chatId: string }) => {
  const client = useClient();
  const [chat, setChat] = useState<Chat | null>(null);
  const [messages, setMessages] = useState<Map<string, Message>>(new Map());
  const [older, setOlder] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<CombinedError | null>(null);
  const [quoting, setQuoting] = useState<Message | null>(null);
  const [marked, markRead] = useMutation(MarkChatRead);
  const scroller = useRef<HTMLElement>(null);
  // What the next render does with the scroll: stay at the newest, or keep the reader's place above a page of older messages.
  const anchor = useRef<{ kind: 'bottom' } | { kind: 'keep'; height: number; top: number } | null>({ kind: 'bottom' });
  // The ids shown, read outside a render (the subscription tells a new message from a changed one).
  const seen = useRef(new Set<string>());
  const merge = useCallback((list: Message[]) => {
    for (const m of list) seen.current.add(m.id);
    setMessages((current) => {
      const copy = new Map(current);
      for (const m of list) copy.set(m.id, m);
      return copy;
    });
  }, []);
  const page = useCallback(
    (after: string | null) =>
      client
        .query(ThreadQuery, { sessionId, chatId, first: PAGE_SIZES.thread, ...(after ? { after } : {}) }, { requestPolicy: 'network-only' })
        .toPromise(),
    [client, sessionId, chatId],
  );
  useEffect(() => {
    let live = true;
    setChat(null);
    setMessages(new Map());
    seen.current = new Set();
    setOlder(null);
    setQuoting(null);
    setLoading(true);
    anchor.current = { kind: 'bottom' };
    void page(null).then((answer) => {
      if (!live) return;
      setLoading(false);
      setError(answer.error ?? null);
      const found = answer.data?.session.chat;
      if (!found) return;
      setChat(found);
      merge(found.messages.edges.map((edge) => edge.node));
      setOlder(found.messages.pageInfo.hasNextPage ? (found.messages.pageInfo.endCursor ?? null) : null);
      // Opened: nothing is unread any more (the chat list hears it through chatUpdates).
      void markRead({ sessionId, chatId: found.id });
    });
    return () => {
      live = false;
    };
  }, [page, merge, markRead, sessionId]);
  const storedChatId = chat?.id ?? null;
  useEffect(() => {
    if (!storedChatId) return;
    const { unsubscribe } = client.subscription(ThreadUpdates, { sessionId, chatId: storedChatId }).subscribe((result) => {
      if (result.error) setError(result.error);
      const m = result.data?.storedMessageUpdates;
      if (!m) return;
      const el = scroller.current;
      // A reader at the newest message stays there as messages arrive; one reading older ones keeps their place.
      if (el && el.scrollHeight - el.scrollTop - el.clientHeight < 48) anchor.current = { kind: 'bottom' };
      const isNew = !seen.current.has(m.id);
      merge([m]);
      // A message received while the chat is open is read.
      if (isNew && !m.fromMe) void markRead({ sessionId, chatId: storedChatId });
    });
    return unsubscribe;
  }, [client, sessionId, storedChatId, markRead, merge]);
  useLayoutEffect(() => {
    const el = scroller.current;
    const want = anchor.current;
    if (!el || !want || messages.size === 0) return;
    if (want.kind === 'bottom') el.scrollTop = el.scrollHeight;
    else el.scrollTop = el.scrollHeight - want.height + want.top;
    anchor.current = null;
  }, [messages]);
  const list = [...messages.values()].sort(byTime);
  const byWaId = new Map(list.map((m) => [m.waMessageId, m]));
  const title = chat ? chatTitle(chat) : shortJid(chatId);
  // In a person's chat, whoever is not us is that person, named as the chat is; in a group, by number.
  const nameOf = (jid: string): string => (chat?.kind === 'person' ? title : shortJid(jid));
  return (
    <Section title={title}>
      <p className="thread-nav">
        <a href={href('sessions', sessionId, 'inbox')}>← All chats</a>
        {chat?.name ? <span className="muted"> {shortJid(chat.id)}</span> : null}
      </p>
      <ErrorBox error={error} />
      {marked.error?.graphQLErrors.some((e) => e.extensions?.code === 'CONFLICT') ? (
        // markChatRead sends read receipts, and refuses while a session's settings turn them off.
        <p className="muted" role="status">
          Not marked read: read receipts are off for this session (turn on sendReadReceipts in its settings).
        </p>
      ) : (
        <ErrorBox error={marked.error} />
      )}
      {loading ? <p className="muted">Loading…</p> : null}
      {!loading && !chat && !error ? <p>This session has no chat {chatId}.</p> : null}
      {chat ? (
        <>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard (WCAG 2.1.1) */}
          <section className="thread" aria-label={`Messages with ${title}`} tabIndex={0} ref={scroller}>
            {older ? (
              <button
                type="button"
                className="older"
                onClick={async () => {
                  const el = scroller.current;
                  const answer = await page(older);
                  setError(answer.error ?? null);
                  const more = answer.data?.session.chat?.messages;
                  if (!more) return;
                  anchor.current = el ? { kind: 'keep', height: el.scrollHeight, top: el.scrollTop } : null;
                  merge(more.edges.map((edge) => edge.node));
                  setOlder(more.pageInfo.hasNextPage ? (more.pageInfo.endCursor ?? null) : null);
                }}
              >
                Older messages
              </button>
            ) : null}
            {list.length === 0 ? <p className="muted">No messages stored in this chat.</p> : null}
            <ol className="thread-list" aria-live="polite">
              {list.map((m) => (
                <Bubble
                  key={m.id}
                  sessionId={sessionId}
                  message={m}
                  group={chat.kind === 'group'}
                  nameOf={nameOf}
                  quotedOf={(id) => byWaId.get(id)}
                  onReply={setQuoting}
                />
              ))}
            </ol>
          </section>
          <ReplyBox sessionId={sessionId} chatId={chat.id} quoting={quoting} onQuoteDone={() => setQuoting(null)} />
        </>
      ) : null}
    </Section>
  );
};

/** A session's inbox: its chats beside the open chat (one above the other on a narrow screen). */
export const InboxPage = ({ id, chatId }: { id: string; chatId: string | null }) => (
  <>
    <p>
      <a href={href('sessions', id)}>← Session</a>
    </p>
    <h1>Inbox</h1>
    <div className={`inbox${chatId ? ' has-thread' : ''}`}>
      <div className="chats-pane">
        <ChatList sessionId={id} openChat={chatId} />
      </div>
      <div className="thread-pane">
        {chatId ? (
          <Thread key={chatId} sessionId={id} chatId={chatId} />
        ) : (
          <Section title="Conversation">
            <p>Choose a chat to read it and reply.</p>
          </Section>
        )}
      </div>
    </div>
  </>
);
