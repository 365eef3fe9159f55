import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { DomainError } from '../resolvers/errors.ts';
import { isPrivateAddress, PRIVATE_URL_MESSAGE } from '../resolvers/media-urls.ts';

export interface FetchedMedia {
  data: Buffer;
  mimetype?: string;
  fileName?: string;
}

export interface MediaFetchOptions {
  maxBytes: number;
  timeoutMs: number;
  allowPrivate: boolean;
  /** DNS, injectable so tests can serve files from made-up public hosts */
  resolveHost?: (host: string) => Promise<string[]>;
}

export type MediaFetcher = (url: string, field?: string) => Promise<FetchedMedia>;

const refused = (field: string, message: string) =>
  new DomainError('VALIDATION_FAILED', message, { details: [{ path: field, message }] });

const defaultResolve = async (host: string): Promise<string[]> =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** The SSRF rule for any URL the service calls on a user's behalf (media, webhooks): every address the host resolves to is public. */
export const assertPublicHost = async (url: URL, field: string, resolveHost: (host: string) => Promise<string[]> = defaultResolve): Promise<void> => {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = ipaddr.isValid(host) ? [host] : await resolveHost(host);
  } catch {
    throw new DomainError('NETWORK_ERROR', `Could not resolve the host of ${field}`);
  }
  if (addresses.length === 0 || addresses.some(isPrivateAddress)) throw refused(field, PRIVATE_URL_MESSAGE);
};

/** Fetches a file the caller named by URL, refusing what could reach inside our own network. */
export const createMediaFetcher = (options: MediaFetchOptions): MediaFetcher => {
  const resolveHost = options.resolveHost ?? defaultResolve;
  return async (rawUrl, field = 'url') => {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw refused(field, 'must be an absolute http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refused(field, 'must use http or https');
    if (!options.allowPrivate) await assertPublicHost(url, field, resolveHost);

    let response: Response;
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(options.timeoutMs), redirect: 'error' });
    } catch (err) {
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      throw new DomainError('NETWORK_ERROR', timedOut ? `Fetching ${field} timed out` : `Could not fetch ${field}`);
    }
    if (!response.ok) throw new DomainError('NETWORK_ERROR', `Fetching ${field} answered HTTP ${response.status}`);
    const declared = Number(response.headers.get('content-length') ?? 0);
    if (declared > options.maxBytes) {
      // Not awaited: some bodies never settle a cancel, and the answer must not wait on it.
      response.body?.cancel().catch(() => undefined);
      throw refused(field, `the file is larger than ${options.maxBytes} bytes`);
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    const reader = response.body?.getReader();
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > options.maxBytes) {
        reader.cancel().catch(() => undefined);
        throw refused(field, `the file is larger than ${options.maxBytes} bytes`);
      }
      chunks.push(value);
    }
    const mimetype = response.headers.get('content-type')?.split(';')[0]?.trim() || undefined;
    const fileName = decodeURIComponent(url.pathname.split('/').pop() ?? '') || undefined;
    return { data: Buffer.concat(chunks), mimetype, fileName };
  };
};
