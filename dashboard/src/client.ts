import { createClient as createWsClient } from 'graphql-ws';
import type { Client as WsClient } from 'graphql-ws';
import { Client, cacheExchange, fetchExchange, subscriptionExchange } from 'urql';

export interface Api {
  client: Client;
  close: () => void;
}

/** One urql client per API key: queries over HTTP, subscriptions over graphql-ws on the same /graphql. */
export const createApi = (apiKey: string): Api => {
  const ws: WsClient = createWsClient({
    url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`,
    connectionParams: { 'x-api-key': apiKey },
    lazy: true,
    retryAttempts: Number.POSITIVE_INFINITY,
  });
  const client = new Client({
    url: '/graphql',
    requestPolicy: 'cache-and-network',
    fetchOptions: () => ({ headers: { 'x-api-key': apiKey } }),
    exchanges: [
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: ws.subscribe({ ...request, query: request.query ?? '' }, sink) }),
        }),
      }),
    ],
  });
  return { client, close: () => void ws.dispose() };
};

const KEY = 'wa-dashboard-api-key';

export const storedKey = (): string | null => sessionStorage.getItem(KEY);
export const storeKey = (key: string | null): void => {
  if (key === null) sessionStorage.removeItem(KEY);
  else sessionStorage.setItem(KEY, key);
};
