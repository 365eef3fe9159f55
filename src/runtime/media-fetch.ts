import type { LookupOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import type { IncomingMessage, RequestOptions } from 'node:http';
import https from 'node:https';
import ipaddr from 'ipaddr.js';
import type { MediaFetcher, UrlRules } from './ports/media.ts';

export interface MediaFetchOptions {
  maxBytes: number;
  timeoutMs: number;
  allowPrivate: boolean;
  /** the domain's rule and errors for fetched URLs */
  urlRules: UrlRules;
  /** DNS, injectable so tests can serve files from made-up public hosts */
  resolveHost?: (host: string) => Promise<string[]>;
}

const defaultResolve = async (host: string): Promise<string[]> => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

type Lookup = NonNullable<RequestOptions['lookup']>;

/**
 * A lookup that answers with the addresses already checked, whatever it is asked: the connection goes to
 * an address the guard saw, so a name that resolves elsewhere the second time (DNS rebinding) cannot
 * move it. TLS still verifies the certificate against the URL's host name.
 */
export const pinnedLookup = (addresses: string[]): Lookup => {
  const entries = addresses.map((address) => ({ address, family: ipaddr.parse(address).kind() === 'ipv6' ? 6 : 4 }));
  return ((_hostname: string, options: LookupOptions, callback: (...args: unknown[]) => void) => {
    const wanted = options.family === 4 || options.family === 6 ? entries.filter((e) => e.family === options.family) : entries;
    const usable = wanted.length > 0 ? wanted : entries;
    if (options.all) callback(null, usable);
    else callback(null, usable[0]?.address, usable[0]?.family);
  }) as Lookup;
};

/** The SSRF rule itself: a host with at least one address, every one of them public. */
const allPublic = (addresses: string[], rules: UrlRules): boolean =>
  addresses.length > 0 && addresses.every((a) => ipaddr.isValid(a) && !rules.isPrivateAddress(a));

/**
 * A lookup for connections that stay open and are reused (webhook deliveries): each new connection
 * resolves the name once, refuses it when any address is private (unless allowed), and connects to the
 * addresses it checked. A literal IP address skips the lookup, so callers check those with
 * `rules.isLiteralPrivateHost` first.
 */
export const guardedLookup = (
  allowPrivate: boolean,
  rules: UrlRules,
  resolveHost: (host: string) => Promise<string[]> = defaultResolve,
): Lookup =>
  ((hostname: string, options: LookupOptions, callback: (...args: unknown[]) => void) => {
    resolveHost(hostname).then(
      (addresses) => {
        if (!(allowPrivate ? addresses.length > 0 && addresses.every((a) => ipaddr.isValid(a)) : allPublic(addresses, rules))) {
          callback(Object.assign(new Error(`url ${rules.privateMessage}`), { code: 'EPRIVATEADDRESS' }));
          return;
        }
        pinnedLookup(addresses)(hostname, options, callback as Parameters<Lookup>[2]);
      },
      (err: unknown) => callback(err),
    );
  }) as Lookup;

/** A file name from the URL's last path segment; a malformed escape (%ZZ) keeps the segment as written. */
const fileNameOf = (url: URL): string | undefined => {
  const last = url.pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(last) || undefined;
  } catch {
    return last || undefined;
  }
};

/** One GET, no redirects followed (a 3xx is an answer like any other non-2xx). */
const get = (url: URL, lookup: Lookup | undefined, signal: AbortSignal): Promise<IncomingMessage> =>
  new Promise((resolve, reject) => {
    // Looked up on the module at call time, where interceptors (msw in tests) can see the call.
    const request = (url.protocol === 'https:' ? https : http).get(url, { lookup, signal, headers: { accept: '*/*' } }, resolve);
    request.on('error', reject);
  });

/**
 * The SSRF rule for any URL the service calls on a user's behalf (media, webhooks): every address the host
 * resolves to is public. Returns those addresses, for a connection pinned to them.
 */
export const assertPublicHost = async (
  url: URL,
  field: string,
  rules: UrlRules,
  resolveHost: (host: string) => Promise<string[]> = defaultResolve,
): Promise<string[]> => {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = ipaddr.isValid(host) ? [host] : await resolveHost(host);
  } catch {
    throw rules.unreachable(`Could not resolve the host of ${field}`);
  }
  if (!allPublic(addresses, rules)) {
    throw rules.refused(field, rules.privateMessage);
  }
  return addresses;
};

/** Fetches a file the caller named by URL, refusing what could reach inside our own network. */
export const createMediaFetcher = (options: MediaFetchOptions): MediaFetcher => {
  const resolveHost = options.resolveHost ?? defaultResolve;
  const rules = options.urlRules;
  const refused = rules.refused;
  return async (rawUrl, field = 'url') => {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw refused(field, 'must be an absolute http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refused(field, 'must use http or https');
    const lookup = options.allowPrivate ? undefined : pinnedLookup(await assertPublicHost(url, field, rules, resolveHost));

    const signal = AbortSignal.timeout(options.timeoutMs);
    const failed = (err: unknown) => {
      const timedOut = signal.aborted || (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'));
      return rules.unreachable(timedOut ? `Fetching ${field} timed out` : `Could not fetch ${field}`);
    };
    let response: IncomingMessage;
    try {
      response = await get(url, lookup, signal);
    } catch (err) {
      throw failed(err);
    }
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      response.destroy();
      throw rules.unreachable(`Fetching ${field} answered HTTP ${status}`);
    }
    const tooLarge = () => refused(field, `the file is larger than ${options.maxBytes} bytes`);
    if (Number(response.headers['content-length'] ?? 0) > options.maxBytes) {
      response.destroy();
      throw tooLarge();
    }
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of response as AsyncIterable<Buffer>) {
        total += chunk.byteLength;
        if (total > options.maxBytes) {
          response.destroy();
          throw tooLarge();
        }
        chunks.push(chunk);
      }
    } catch (err) {
      if (rules.isRuleError(err)) throw err;
      throw failed(err);
    }
    const mimetype = response.headers['content-type']?.split(';')[0]?.trim() || undefined;
    return { data: Buffer.concat(chunks), mimetype, fileName: fileNameOf(url) };
  };
};
