import { useState } from 'react';
import { createApi } from '../client.ts';
import { MeQuery } from '../api.ts';
import { ErrorBox, Field } from '../ui.tsx';
import type { CombinedError } from 'urql';

/** Checks the key with `me` before keeping it, so a typo is told at once. */
export const SignIn = ({ onSignIn }: { onSignIn: (key: string) => void }) => {
  const [key, setKey] = useState('');
  const [error, setError] = useState<CombinedError | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <main className="signin">
      <h1>Messaging dashboard</h1>
      <form
        className="card"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          const api = createApi(key.trim());
          const result = await api.client.query(MeQuery, {}, { requestPolicy: 'network-only' }).toPromise();
          api.close();
          setBusy(false);
          if (result.error) setError(result.error);
          else onSignIn(key.trim());
        }}
      >
        <p>Sign in with an account's API key. It is kept in this tab only (session storage) and sent as x-api-key.</p>
        <Field label="API key" type="password" name="apiKey" value={key} onChange={setKey} required />
        <ErrorBox error={error} />
        <button type="submit" className="primary" disabled={busy || key.trim() === ''}>
          Sign in
        </button>
      </form>
    </main>
  );
};
