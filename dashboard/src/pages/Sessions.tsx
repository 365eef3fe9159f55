import { useEffect, useState } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import {
  ConnectSession,
  CreateSession,
  DeleteSession,
  DisconnectSession,
  RenameSession,
  RequestPairingCode,
  SessionsQuery,
  SessionUpdates,
  SetSessionStatus,
} from '../api.ts';
import type { SessionFieldsFragment } from '../generated/graphql.ts';
import { href } from '../route.ts';
import { ConfirmButton, ErrorBox, Field, formatTime, Section, StatusBadge } from '../ui.tsx';

/** What the API records as lastError for a disconnect someone asked for (src/resolvers/sessions.ts): not a failure. */
const MANUAL_DISCONNECT = 'Disconnected manually';

// An empty list names no type, so urql is told which mutations make it stale.
const SESSION_LIST = { additionalTypenames: ['Session'] };

/**
 * The session as it is now: whichever came last of the query's answer (refetched after a mutation,
 * such as a rename) and the sessionUpdates event.
 */
export const useLiveSession = (session: SessionFieldsFragment): SessionFieldsFragment => {
  const [current, setCurrent] = useState(session);
  const [live] = useSubscription({ query: SessionUpdates, variables: { sessionId: session.id } });
  useEffect(() => setCurrent(session), [session]);
  useEffect(() => {
    if (live.data) setCurrent(live.data.sessionUpdates);
  }, [live.data]);
  return current;
};

const PairingCode = ({ id }: { id: string }) => {
  const [phone, setPhone] = useState('');
  const [result, request] = useMutation(RequestPairingCode);
  return (
    <form
      className="inline"
      onSubmit={(e) => {
        e.preventDefault();
        void request({ id, phoneNumber: phone.trim() });
      }}
    >
      <Field label="Phone number for a pairing code" placeholder="15551234567" value={phone} onChange={setPhone} />
      <button type="submit">Get pairing code</button>
      {result.data ? (
        <p className="pairing" aria-live="polite">
          Enter on the phone: <strong data-testid="pairing-code">{result.data.requestPairingCode}</strong>
        </p>
      ) : null}
      <ErrorBox error={result.error} />
    </form>
  );
};

export const SessionControls = ({ initial }: { initial: SessionFieldsFragment }) => {
  const s = useLiveSession(initial);
  const [connectState, connect] = useMutation(ConnectSession);
  const [disconnectState, disconnect] = useMutation(DisconnectSession);
  const [statusState, setStatus] = useMutation(SetSessionStatus);
  const [renameState, rename] = useMutation(RenameSession);
  const [deleteState, remove] = useMutation(DeleteSession);
  const [renaming, setRenaming] = useState<string | null>(null);
  const error = connectState.error ?? disconnectState.error ?? statusState.error ?? renameState.error ?? deleteState.error;
  const linked = s.status === 'CONNECTED' || s.status === 'CONNECTING' || s.status === 'QR_READY';
  return (
    <article className="card session" data-session-id={s.id} data-status={s.status} aria-label={`Session ${s.sessionName}`}>
      <header className="row">
        <h3>
          <a href={href('sessions', s.id)}>{s.sessionName}</a>
        </h3>
        <span aria-live="polite">
          <StatusBadge status={s.status} />
        </span>
      </header>
      <dl className="facts">
        <dt>Phone</dt>
        <dd>{s.phone ?? '—'}</dd>
        <dt>Last seen</dt>
        <dd>{formatTime(s.lastSeen)}</dd>
      </dl>
      {s.lastError && !(s.status === 'DISCONNECTED' && s.lastError === MANUAL_DISCONNECT) ? (
        <p className="last-error">
          <strong>Last error:</strong> {s.lastError}
        </p>
      ) : null}
      {s.status === 'DISCONNECTED' && s.lastError === MANUAL_DISCONNECT ? (
        <p className="muted">Disconnected by you: connect again when you want.</p>
      ) : null}
      {s.status === 'QR_READY' && s.qrCode ? (
        <figure className="qr">
          <img src={s.qrCode} alt="QR code: scan it with WhatsApp on the phone (Linked devices)" width={220} height={220} />
          <figcaption>Scan with WhatsApp → Linked devices. It changes every few seconds.</figcaption>
        </figure>
      ) : null}
      <div className="actions">
        {!linked && s.status !== 'PAUSED' ? (
          <button type="button" className="primary" onClick={() => void connect({ id: s.id })}>
            Connect
          </button>
        ) : null}
        {linked ? (
          <button type="button" onClick={() => void disconnect({ id: s.id })}>
            Disconnect
          </button>
        ) : null}
        {s.status !== 'PAUSED' ? (
          <button type="button" onClick={() => void setStatus({ id: s.id, status: 'PAUSED' })}>
            Pause
          </button>
        ) : (
          <button type="button" className="primary" onClick={() => void setStatus({ id: s.id, status: 'CONNECTED' })}>
            Resume
          </button>
        )}
        {renaming === null ? (
          <button type="button" onClick={() => setRenaming(s.sessionName)}>
            Rename
          </button>
        ) : null}
        <ConfirmButton
          label="Delete"
          question={`Delete session ${s.sessionName}?`}
          onConfirm={() => void remove({ id: s.id }, { additionalTypenames: ['Session'] })}
        />
      </div>
      {renaming !== null ? (
        <form
          className="inline"
          onSubmit={async (e) => {
            e.preventDefault();
            const r = await rename({ id: s.id, name: renaming.trim() });
            if (!r.error) setRenaming(null);
          }}
        >
          <Field label="New name" value={renaming} onChange={setRenaming} required />
          <button type="submit" className="primary">
            Save
          </button>
          <button type="button" onClick={() => setRenaming(null)}>
            Cancel
          </button>
        </form>
      ) : null}
      {s.status !== 'CONNECTED' ? <PairingCode id={s.id} /> : null}
      <ErrorBox error={error} />
    </article>
  );
};

export const SessionsPage = () => {
  const [sessions, refetch] = useQuery({ query: SessionsQuery, context: SESSION_LIST });
  const [name, setName] = useState('');
  const [created, create] = useMutation(CreateSession);
  return (
    <>
      <h1>Sessions</h1>
      <Section title="New session">
        <form
          className="inline"
          onSubmit={async (e) => {
            e.preventDefault();
            const r = await create({ name: name.trim() });
            if (!r.error) {
              setName('');
              refetch({ requestPolicy: 'network-only' });
            }
          }}
        >
          <Field label="Session name" name="sessionName" value={name} onChange={setName} required />
          <button type="submit" className="primary">
            Create session
          </button>
        </form>
        <ErrorBox error={created.error} />
      </Section>
      <ErrorBox error={sessions.error} />
      {sessions.data?.sessions.totalCount === 0 ? <p>No sessions yet: create one above, then connect it.</p> : null}
      <div className="grid">
        {sessions.data?.sessions.edges.map(({ node: s }) => (
          <SessionControls key={s.id} initial={s} />
        ))}
      </div>
    </>
  );
};
