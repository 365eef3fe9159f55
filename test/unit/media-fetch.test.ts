import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/resolvers/errors.ts';
import { urlRulesFor } from '../../src/resolvers/media-urls.ts';
import { createMediaFetcher, pinnedLookup } from '../../src/runtime/media-fetch.ts';

const urlRules = urlRulesFor('MEDIA_ALLOW_PRIVATE');

const files = setupServer(
  http.get('https://files.example.com/cat.jpg', () =>
    HttpResponse.arrayBuffer(new Uint8Array([0xff, 0xd8, 0xff, 1, 2, 3]).buffer, { headers: { 'content-type': 'image/jpeg' } }),
  ),
  http.get('https://files.example.com/big.bin', () => HttpResponse.arrayBuffer(new Uint8Array(2048).buffer)),
  http.get('https://files.example.com/missing.png', () => new HttpResponse(null, { status: 404 })),
  http.get('https://files.example.com/bad%ZZname.png', () =>
    HttpResponse.arrayBuffer(new Uint8Array([1]).buffer, { headers: { 'content-type': 'image/png' } }),
  ),
  http.get(
    'https://files.example.com/moved.png',
    () => new HttpResponse(null, { status: 302, headers: { location: 'http://127.0.0.1/secret' } }),
  ),
  http.get('https://rebind.example.com/file.png', () =>
    HttpResponse.arrayBuffer(new Uint8Array([7]).buffer, { headers: { 'content-type': 'image/png' } }),
  ),
);

const publicDns = async (host: string) => (host === 'inside.example.com' ? ['10.1.2.3'] : ['93.184.216.34']);
const fetchMedia = createMediaFetcher({ maxBytes: 1024, timeoutMs: 2_000, allowPrivate: false, urlRules, resolveHost: publicDns });

const failure = async (url: string) => {
  try {
    await fetchMedia(url);
  } catch (err) {
    return err instanceof DomainError ? { code: err.code, message: err.message } : { code: 'other', message: String(err) };
  }
  return { code: 'none', message: '' };
};

describe('media fetch', () => {
  beforeAll(() => files.listen({ onUnhandledRequest: 'error' }));
  afterAll(() => files.close());

  it('fetches a public file with its content type and name', async () => {
    const media = await fetchMedia('https://files.example.com/cat.jpg');
    expect(media.mimetype).toBe('image/jpeg');
    expect(media.fileName).toBe('cat.jpg');
    expect([...media.data]).toEqual([0xff, 0xd8, 0xff, 1, 2, 3]);
  });

  it('refuses other schemes and private, loopback and link-local addresses with 400', async () => {
    for (const url of [
      'ftp://files.example.com/a',
      'http://127.0.0.1/a',
      'http://[::1]/a',
      'http://169.254.169.254/latest',
      'http://192.168.1.1/x',
      'https://inside.example.com/a',
    ]) {
      expect(await failure(url), url).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
  });

  it('keeps a file name with a malformed escape as written instead of failing after the download', async () => {
    const media = await fetchMedia('https://files.example.com/bad%ZZname.png');
    expect(media.fileName).toBe('bad%ZZname.png');
    expect([...media.data]).toEqual([1]);
  });

  it('does not follow a redirect (it could point inside)', async () => {
    expect(await failure('https://files.example.com/moved.png')).toMatchObject({
      code: 'NETWORK_ERROR',
      message: expect.stringContaining('302'),
    });
  });

  it('resolves a host once per fetch: a name that answers a private address the second time is never asked again', async () => {
    let lookups = 0;
    const rebinding = createMediaFetcher({
      maxBytes: 1024,
      timeoutMs: 2_000,
      allowPrivate: false,
      urlRules,
      resolveHost: async () => (++lookups === 1 ? ['93.184.216.34'] : ['127.0.0.1']),
    });
    expect([...(await rebinding('https://rebind.example.com/file.png')).data]).toEqual([7]);
    expect(lookups).toBe(1);
  });

  it('connects to the pinned address whatever the host name says', async () => {
    // A name no resolver knows: only the pinned lookup can bring the request to this loopback server.
    const server = createServer((_req, res) => res.end('pinned'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const body = await new Promise<string>((resolve, reject) => {
        get(`http://pinned-host.invalid:${port}/`, { lookup: pinnedLookup(['127.0.0.1']) }, (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => {
            text += chunk.toString();
          });
          res.on('end', () => resolve(text));
        }).on('error', reject);
      });
      expect(body).toBe('pinned');
    } finally {
      server.close();
    }
  });

  it('refuses a file over the size bound with 400 and a failing fetch with 502', async () => {
    expect(await failure('https://files.example.com/big.bin')).toMatchObject({
      code: 'VALIDATION_FAILED',
      message: expect.stringContaining('larger'),
    });
    expect(await failure('https://files.example.com/missing.png')).toMatchObject({
      code: 'NETWORK_ERROR',
      message: expect.stringContaining('404'),
    });
  });
});
