import { useState } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import {
  CampaignProgress,
  CancelQueuedMessage,
  CancelRecurring,
  MessagesQuery,
  RecurringQuery,
  ScheduleMessage,
  SessionsQuery,
  StartCampaign,
  StartRecurring,
} from '../api.ts';
import { PAGE_SIZES } from '../page-sizes.ts';
import { ErrorBox, Field, formatTime, Section, Select } from '../ui.tsx';

// An empty list names no type, so urql is told which mutations make it stale.
const RECURRING_LIST = { additionalTypenames: ['RecurringMessage'] };

const PENDING_LIST = { additionalTypenames: ['OutgoingMessage'] };

/** Scheduled messages (and sends still queued) of a session: its outgoing messages still PENDING. */
const Pending = ({ sessionId }: { sessionId: string }) => {
  const [pending, refetch] = useQuery({
    query: MessagesQuery,
    variables: { sessionId, status: 'PENDING', first: PAGE_SIZES.pending },
    context: PENDING_LIST,
  });
  const [cancelled, cancel] = useMutation(CancelQueuedMessage);
  const items = pending.data?.session.messages.edges.map((e) => e.node) ?? [];
  return (
    <Section title="Pending messages">
      <button type="button" onClick={() => refetch({ requestPolicy: 'network-only' })}>
        Refresh
      </button>
      <ErrorBox error={pending.error ?? cancelled.error} />
      {items.length === 0 ? <p>None.</p> : null}
      <ul className="plain">
        {items.map((m) => (
          <li key={m.id}>
            To {m.toNumber}: “{m.content}”{' '}
            <span className="muted">{m.sendAt ? `due ${formatTime(m.sendAt)}` : `queued ${formatTime(m.createdAt)}`}</span>{' '}
            <button
              type="button"
              aria-label={`Cancel “${m.content}” to ${m.toNumber}`}
              onClick={() => void cancel({ sessionId, messageId: m.id }, PENDING_LIST)}
            >
              Cancel
            </button>
          </li>
        ))}
      </ul>
    </Section>
  );
};

const Progress = ({ campaignId, total }: { campaignId: string; total: number }) => {
  const [progress] = useSubscription({ query: CampaignProgress, variables: { campaignId } });
  const p = progress.data?.campaignProgress;
  const done = p ? p.sent + p.failed : 0;
  return (
    <div className="campaign" data-campaign-id={campaignId}>
      <label htmlFor={`progress-${campaignId}`}>
        Campaign {campaignId}: {done} of {p?.total ?? total} done ({p?.sent ?? 0} sent, {p?.failed ?? 0} failed, {p?.remaining ?? total}{' '}
        remaining)
      </label>
      <progress id={`progress-${campaignId}`} max={p?.total ?? total} value={done} />
      <ErrorBox error={progress.error} />
    </div>
  );
};

export const SchedulingPage = () => {
  const [sessions] = useQuery({ query: SessionsQuery });
  const [sessionId, setSessionId] = useState('');
  const current = sessionId || sessions.data?.sessions.edges[0]?.node.id || '';
  const [to, setTo] = useState('');
  const [message, setMessage] = useState('');
  const [sendAt, setSendAt] = useState('');
  const [scheduled, schedule] = useMutation(ScheduleMessage);
  const [recurring] = useQuery({ query: RecurringQuery, variables: { sessionId: current }, pause: !current, context: RECURRING_LIST });
  const [cancelled, cancel] = useMutation(CancelRecurring);
  const [everyTo, setEveryTo] = useState('');
  const [everyMessage, setEveryMessage] = useState('');
  const [everyMinutes, setEveryMinutes] = useState('60');
  const [started, startEvery] = useMutation(StartRecurring);
  const [template, setTemplate] = useState('Hello {name}!');
  const [recipients, setRecipients] = useState('');
  const [delay, setDelay] = useState('1000');
  const [campaignStarted, start] = useMutation(StartCampaign);
  const [campaigns, setCampaigns] = useState<Array<{ id: string; total: number }>>([]);
  return (
    <>
      <h1>Scheduling and campaigns</h1>
      <Select
        label="Session"
        value={current}
        onChange={setSessionId}
        options={(sessions.data?.sessions.edges ?? []).map(({ node: s }) => [s.id, `${s.sessionName} (${s.status})`])}
      />
      <ErrorBox error={sessions.error} />
      <Section title="Schedule a message">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void schedule(
              { sessionId: current, to: to.trim(), message, ...(sendAt ? { sendAt: new Date(sendAt).toISOString() } : {}) },
              PENDING_LIST,
            );
          }}
        >
          <Field label="To" value={to} onChange={setTo} required />
          <Field label="Message" value={message} onChange={setMessage} required />
          <Field label="Send at" type="datetime-local" value={sendAt} onChange={setSendAt} required />
          <button type="submit" className="primary">
            Schedule
          </button>
        </form>
        {scheduled.data ? (
          <p role="status">
            Scheduled {scheduled.data.scheduleMessage.messageId} for {formatTime(scheduled.data.scheduleMessage.sendAt)}
          </p>
        ) : null}
        <ErrorBox error={scheduled.error} />
      </Section>
      {current ? <Pending sessionId={current} /> : null}
      <Section title="Recurring messages">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const everyMs = Math.round(Number(everyMinutes) * 60_000);
            void startEvery({ sessionId: current, to: everyTo.trim(), message: everyMessage, everyMs }, RECURRING_LIST);
          }}
        >
          <Field label="Recurring to" value={everyTo} onChange={setEveryTo} required />
          <Field label="Recurring message" value={everyMessage} onChange={setEveryMessage} required />
          <Field label="Every (minutes)" type="number" value={everyMinutes} onChange={setEveryMinutes} required />
          <button type="submit" className="primary">
            Start recurring
          </button>
        </form>
        {started.data ? (
          <p role="status">
            Recurring every {Math.round(started.data.startRecurring.recurringEveryMs / 60_000)} min, timer{' '}
            {started.data.startRecurring.timerId}
          </p>
        ) : null}
        <ErrorBox error={started.error ?? recurring.error ?? cancelled.error} />
        {recurring.data?.recurringMessages.length === 0 ? <p>None.</p> : null}
        <ul className="plain">
          {recurring.data?.recurringMessages.map((r) => (
            <li key={r.timerId}>
              To {r.to} every {r.everyMs % 60_000 === 0 ? `${r.everyMs / 60_000} min` : `${Math.round(r.everyMs / 1000)} s`}: “{r.message}”{' '}
              <button
                type="button"
                onClick={() => void cancel({ sessionId: current, timerId: r.timerId }, { additionalTypenames: ['RecurringMessage'] })}
              >
                Cancel
              </button>
            </li>
          ))}
        </ul>
      </Section>
      <Section title="Start a campaign">
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const contacts = recipients
              .split('\n')
              .map((line) => line.split(',').map((part) => part.trim()))
              .filter(([jid]) => jid)
              .map(([to, name]) => ({
                jid: /^\+?\d+$/.test(to) ? `${to.replace('+', '')}@s.whatsapp.net` : to,
                ...(name ? { name } : {}),
              }));
            const r = await start({ sessionId: current, template, contacts, delayMs: Number(delay) });
            const campaign = r.data?.startCampaign;
            if (campaign) setCampaigns((list) => [{ id: campaign.campaignId, total: campaign.count }, ...list]);
          }}
        >
          <Field label="Template ({name} is replaced by each name)" value={template} onChange={setTemplate} required />
          <div className="field">
            <label htmlFor="campaign-recipients">Recipients, one per line: number or JID, then a comma and a name</label>
            <textarea
              id="campaign-recipients"
              rows={4}
              value={recipients}
              onChange={(e) => setRecipients(e.currentTarget.value)}
              required
            />
          </div>
          <Field label="Delay between messages (ms)" type="number" value={delay} onChange={setDelay} />
          <button type="submit" className="primary">
            Start campaign
          </button>
        </form>
        <ErrorBox error={campaignStarted.error} />
        {campaigns.map((c) => (
          <Progress key={c.id} campaignId={c.id} total={c.total} />
        ))}
      </Section>
    </>
  );
};
