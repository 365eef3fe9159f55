import { useEffect, useMemo, useState } from 'react';
import { Provider, useQuery } from 'urql';
import { MeQuery } from './api.ts';
import { createApi, storedKey, storeKey } from './client.ts';
import { ContactsPage } from './pages/Contacts.tsx';
import { InboxPage } from './pages/Inbox.tsx';
import { SchedulingPage } from './pages/Scheduling.tsx';
import { SessionPage } from './pages/Session.tsx';
import { SessionsPage } from './pages/Sessions.tsx';
import { SignIn } from './pages/SignIn.tsx';
import { WebhooksPage } from './pages/Webhooks.tsx';
import { href, useRoute } from './route.ts';
import { ErrorBox } from './ui.tsx';

const NAV: Array<[string, string]> = [
  ['sessions', 'Sessions'],
  ['contacts', 'Contacts'],
  ['scheduling', 'Scheduling'],
  ['webhooks', 'Webhooks'],
];

const Shell = ({ onSignOut }: { onSignOut: () => void }) => {
  const route = useRoute();
  const [me] = useQuery({ query: MeQuery, requestPolicy: 'cache-first' });
  const section = route[0] ?? 'sessions';
  useEffect(() => {
    // An unknown or revoked key: back to the sign-in form.
    if (me.error?.graphQLErrors.some((e) => e.extensions?.code === 'UNAUTHENTICATED')) onSignOut();
  }, [me.error, onSignOut]);
  let page = <SessionsPage />;
  if (section === 'sessions' && route[1] && route[2] === 'inbox') page = <InboxPage id={route[1]} chatId={route[3] ?? null} />;
  else if (section === 'sessions' && route[1]) page = <SessionPage id={route[1]} />;
  else if (section === 'contacts') page = <ContactsPage />;
  else if (section === 'scheduling') page = <SchedulingPage />;
  else if (section === 'webhooks') page = <WebhooksPage />;
  return (
    <>
      <header className="top">
        <a className="brand" href={href('sessions')}>
          Messaging
        </a>
        <nav aria-label="Main">
          {NAV.map(([path, label]) => (
            <a key={path} href={href(path)} aria-current={section === path ? 'page' : undefined}>
              {label}
            </a>
          ))}
          <a href="/graphql">GraphiQL</a>
        </nav>
        <span className="who">{me.data?.me.email}</span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main>
        <ErrorBox error={me.error} />
        {page}
      </main>
    </>
  );
};

export const App = () => {
  const [key, setKey] = useState<string | null>(storedKey);
  const api = useMemo(() => (key ? createApi(key) : null), [key]);
  useEffect(() => () => api?.close(), [api]);
  const signOut = useMemo(
    () => () => {
      storeKey(null);
      setKey(null);
    },
    [],
  );
  if (!api) {
    return (
      <SignIn
        onSignIn={(k) => {
          storeKey(k);
          setKey(k);
        }}
      />
    );
  }
  return (
    <Provider value={api.client}>
      <Shell onSignOut={signOut} />
    </Provider>
  );
};
