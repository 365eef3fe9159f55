import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import {
  CreateSink,
  CreateWebhook,
  DeleteSink,
  DeleteWebhook,
  ReplayWebhook,
  SendTestWebhook,
  SinksQuery,
  UpdateSinkEnabled,
  WebhookDeliveriesQuery,
  WebhooksQuery,
} from '../api.ts';
import type { SinkKind } from '../generated/graphql.ts';
import type { WebhookDeliveryStatus } from '../generated/graphql.ts';
import { ConfirmButton, ErrorBox, Field, formatTime, Section, Select, StatusBadge, TableWrap } from '../ui.tsx';

// An empty list names no type, so urql is told which mutations make it stale.
const WEBHOOK_LIST = { additionalTypenames: ['Webhook'] };

const Deliveries = ({ id }: { id: string }) => {
  const [status, setStatus] = useState('');
  const [deliveries, refetch] = useQuery({
    query: WebhookDeliveriesQuery,
    variables: { id, limit: 50, ...(status ? { status: status as WebhookDeliveryStatus } : {}) },
  });
  const [replayed, replay] = useMutation(ReplayWebhook);
  const [since, setSince] = useState('');
  return (
    <div>
      <div className="inline">
        <Select
          label="Delivery status"
          value={status}
          onChange={setStatus}
          options={[
            ['', 'Any'],
            ['PENDING', 'Pending'],
            ['DELIVERED', 'Delivered'],
            ['FAILED', 'Failed'],
          ]}
        />
        <button type="button" onClick={() => refetch({ requestPolicy: 'network-only' })}>
          Refresh
        </button>
      </div>
      <form
        className="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void replay({ id, since: new Date(since).toISOString() });
        }}
      >
        <Field label="Replay failed deliveries since" type="datetime-local" value={since} onChange={setSince} required />
        <button type="submit">Replay</button>
      </form>
      {replayed.data ? <p role="status">Replaying {replayed.data.replayWebhook} deliveries</p> : null}
      <ErrorBox error={deliveries.error ?? replayed.error} />
      <TableWrap label="Delivery log table">
        <table>
          <caption className="sr-only">Delivery log</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Created</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.data?.webhookDeliveries.map((d) => (
              <tr key={d.id}>
                <td>
                  {d.type}
                  <div className="muted">{d.eventId}</div>
                </td>
                <td>
                  <StatusBadge status={d.status} />
                  {d.lastError ? <div className="last-error">{d.lastError}</div> : null}
                </td>
                <td>
                  {d.attempts}
                  {d.lastStatus ? ` (HTTP ${d.lastStatus})` : ''}
                </td>
                <td>{formatTime(d.createdAt)}</td>
                <td>
                  <button type="button" onClick={() => void replay({ id, eventId: d.eventId })}>
                    Replay
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </div>
  );
};

const SINK_LIST = { additionalTypenames: ['Sink'] };

/** RabbitMQ and NATS JetStream sinks (docs/sinks.md): the same events, published into a broker. */
const Sinks = () => {
  const [sinks, refetch] = useQuery({ query: SinksQuery, context: SINK_LIST });
  const [kind, setKind] = useState('amqp');
  const [url, setUrl] = useState('');
  const [target, setTarget] = useState('');
  const [prefix, setPrefix] = useState('');
  const [events, setEvents] = useState('*');
  const [created, create] = useMutation(CreateSink);
  const [changed, change] = useMutation(UpdateSinkEnabled);
  const [deleted, remove] = useMutation(DeleteSink);
  return (
    <Section title="Event sinks (RabbitMQ, NATS JetStream)">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const list = events
            .split(',')
            .map((ev) => ev.trim())
            .filter(Boolean);
          const where = kind === 'amqp' ? { exchange: target.trim() } : { stream: target.trim(), subjectPrefix: prefix.trim() };
          void create({ kind: kind as SinkKind, url: url.trim(), events: list, ...where }, SINK_LIST);
        }}
      >
        <Select
          label="Broker"
          value={kind}
          onChange={setKind}
          options={[
            ['amqp', 'RabbitMQ (AMQP)'],
            ['nats', 'NATS JetStream'],
          ]}
        />
        <Field label="Broker URL" value={url} onChange={setUrl} required />
        <Field label={kind === 'amqp' ? 'Exchange' : 'Stream'} value={target} onChange={setTarget} required />
        {kind === 'nats' ? <Field label="Subject prefix" value={prefix} onChange={setPrefix} required /> : null}
        <Field label="Sink events (comma-separated)" value={events} onChange={setEvents} required />
        <button type="submit" className="primary">
          Add sink
        </button>
      </form>
      <ErrorBox error={created.error ?? sinks.error ?? changed.error ?? deleted.error} />
      <button type="button" onClick={() => refetch({ requestPolicy: 'network-only' })}>
        Refresh sinks
      </button>
      <TableWrap label="Event sinks table">
        <table>
          <caption className="sr-only">Event sinks</caption>
          <thead>
            <tr>
              <th scope="col">Sink</th>
              <th scope="col">Status</th>
              <th scope="col">Waiting</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {sinks.data?.sinks.map((s) => (
              <tr key={s.id}>
                <td>
                  {s.url}
                  <div className="muted">
                    {s.kind === 'amqp' ? `exchange ${s.exchange}` : `stream ${s.stream}, subjects ${s.subjectPrefix}.>`} ·{' '}
                    {s.events.join(', ')}
                  </div>
                </td>
                <td>
                  {s.status.state}
                  {s.status.failingSince ? <span className="last-error"> · failing since {formatTime(s.status.failingSince)}</span> : null}
                  {s.status.lastError && s.status.state === 'failing' ? <div className="last-error">{s.status.lastError}</div> : null}
                </td>
                <td>{s.status.pending}</td>
                <td>
                  <button type="button" onClick={() => void change({ id: s.id, enabled: !s.enabled }, SINK_LIST)}>
                    {s.enabled ? 'Pause' : 'Resume'}
                  </button>
                  <ConfirmButton label="Delete" question={`Delete sink ${s.url}?`} onConfirm={() => void remove({ id: s.id }, SINK_LIST)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </Section>
  );
};

export const WebhooksPage = () => {
  const [webhooks] = useQuery({ query: WebhooksQuery, context: WEBHOOK_LIST });
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('message.received, message.sent, message.failed, session.status');
  const [created, create] = useMutation(CreateWebhook);
  const [deleted, remove] = useMutation(DeleteWebhook);
  const [tested, test] = useMutation(SendTestWebhook);
  const [testedId, setTestedId] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const context = { additionalTypenames: ['Webhook'] };
  return (
    <>
      <h1>Webhooks</h1>
      <Section title="New endpoint">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const list = events
              .split(',')
              .map((ev) => ev.trim())
              .filter(Boolean);
            void create({ url: url.trim(), events: list }, context);
          }}
        >
          <Field label="URL" type="url" value={url} onChange={setUrl} required />
          <Field label="Events (comma-separated)" value={events} onChange={setEvents} required />
          <button type="submit" className="primary">
            Add endpoint
          </button>
        </form>
        {created.data ? (
          <p role="status">
            Signing secret (shown once): <code>{created.data.createWebhook.secret}</code>
          </p>
        ) : null}
        <ErrorBox error={created.error} />
      </Section>
      <ErrorBox error={webhooks.error ?? deleted.error ?? tested.error} />
      {webhooks.data?.webhooks.map((w) => (
        <Section key={w.id} title={w.url}>
          <p>
            {w.enabled ? 'Enabled' : `Disabled${w.disabledReason ? `: ${w.disabledReason}` : ''}`} · {w.events.join(', ')}
            {w.failingSince ? <span className="last-error"> · failing since {formatTime(w.failingSince)}</span> : null}
          </p>
          <div className="actions">
            <button type="button" aria-expanded={open === w.id} onClick={() => setOpen(open === w.id ? null : w.id)}>
              {open === w.id ? 'Hide deliveries' : 'Show deliveries'}
            </button>
            <button
              type="button"
              onClick={async () => {
                setTestedId(null);
                const r = await test({ id: w.id });
                if (r.data) setTestedId(w.id);
              }}
            >
              Send a test event
            </button>
            <ConfirmButton label="Delete" question={`Delete endpoint ${w.url}?`} onConfirm={() => void remove({ id: w.id }, context)} />
          </div>
          {testedId === w.id && tested.data ? (
            <p role="status">
              Test event <code>{tested.data.sendTestWebhook}</code> (webhook.test) queued: it shows in the deliveries
            </p>
          ) : null}
          {open === w.id ? <Deliveries id={w.id} /> : null}
        </Section>
      ))}
      <Sinks />
    </>
  );
};
