import type { BinaryNode } from 'baileys';

const bytes = (n: number, seed: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff));

/**
 * Stanzas that reach every branch of Baileys' binary encoder: dictionary tokens, nibble- and hex-packed
 * strings (odd and even lengths), JIDs with and without a device, raw strings of each length class,
 * binary content, lists of each size class, skipped and non-string attributes.
 */
export const binaryNodeCases = (): Array<[string, BinaryNode]> => [
  [
    'a message stanza',
    {
      tag: 'message',
      attrs: { id: '3EB0C5A1B2C3D4E5F6A7', to: '15550000001@s.whatsapp.net', type: 'text' },
      content: [
        {
          tag: 'participants',
          attrs: {},
          content: [
            {
              tag: 'to',
              attrs: { jid: '15550000001:3@s.whatsapp.net' },
              content: [{ tag: 'enc', attrs: { v: '2', type: 'msg' }, content: bytes(180, 7) }],
            },
            {
              tag: 'to',
              attrs: { jid: '123456789012345@lid' },
              content: [{ tag: 'enc', attrs: { v: '2', type: 'pkmsg', decrypt_fail: 'hide' }, content: bytes(300, 3) }],
            },
          ],
        },
        { tag: 'device-identity', attrs: {}, content: new Uint8Array(bytes(64, 1)) },
      ],
    },
  ],
  [
    'a receipt ack',
    {
      tag: 'ack',
      attrs: { id: 'ABCDEF0123', class: 'receipt', type: 'read', to: '15550000002@s.whatsapp.net', participant: '1555-0000.3' },
    },
  ],
  [
    'nibbles and hex, odd and even',
    { tag: 'iq', attrs: { id: '12345', t: '1700000000', xmlns: 'w:p', a: '1-2.3', b: 'ABCDEF', c: 'ABCDE', d: '0' } },
  ],
  ['lowercase hex is a raw string', { tag: 'x', attrs: { id: 'abcdef', note: 'héllo wörld ✓' } }],
  [
    'empty, null and undefined',
    {
      tag: 'x',
      attrs: { e: '', n: null as unknown as string, u: undefined as unknown as string, num: 5 as unknown as string },
      content: '',
    },
  ],
  ['string content', { tag: 'body', attrs: {}, content: 'plain text content' }],
  ['raw string of 300 bytes', { tag: 'x', attrs: { long: 'z'.repeat(300) } }],
  ['binary content of 70,000 bytes', { tag: 'x', attrs: {}, content: bytes(70_000, 9) }],
  ['binary content of 1,100,000 bytes', { tag: 'x', attrs: {}, content: bytes(1_100_000, 5) }],
  [
    'a list of 300 children',
    { tag: 'list', attrs: {}, content: Array.from({ length: 300 }, (_, i) => ({ tag: 'item', attrs: { n: String(i) } })) },
  ],
  [
    'an empty list and skipped children',
    {
      tag: 'x',
      attrs: {},
      content: [{ tag: 'a', attrs: {}, content: [] }, null as unknown as BinaryNode, { tag: '', attrs: {} } as BinaryNode],
    },
  ],
  [
    'JIDs of every kind',
    {
      tag: 'x',
      attrs: {
        a: '@s.whatsapp.net',
        b: '15550000001@c.us',
        c: '120363000000000001@g.us',
        d: '15550000001:12@s.whatsapp.net',
        e: '98765@lid',
        f: '98765:2@lid',
        g: 'status@broadcast',
        h: '15550000001@hosted',
      },
    },
  ],
  ['prototype names as strings', { tag: 'x', attrs: { constructor: 'toString', valueOf: 'hasOwnProperty' } }],
];

/** Nodes the encoder refuses, with the message it throws. */
export const refusedBinaryNodes = (): Array<[BinaryNode, string]> => [
  [{ tag: '', attrs: {} }, 'Invalid node: tag cannot be undefined'],
  [{ tag: 'x', attrs: {}, content: 5 as unknown as string }, 'invalid children for header "x": 5 (number)'],
  [{ tag: 'x', attrs: {}, content: ['str' as unknown as BinaryNode] }, 'Invalid node: tag cannot be undefined'],
];
