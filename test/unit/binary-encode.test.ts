import { createHash } from 'node:crypto';
import { decodeBinaryNode, encodeBinaryNode } from 'baileys';
import type { BinaryNode } from 'baileys';
import { describe, expect, it } from 'vitest';
import { binaryNodeCases, refusedBinaryNodes } from './binary-node-cases.ts';

// Length and SHA-256 of each case's bytes as Baileys 7.0.0-rc14's own encoder wrote them, before the
// patch replaced it (patches/baileys+7.0.0-rc14.patch, WABinary/encode.js).
const RC14_BYTES: Record<string, string> = {
  'a message stanza': '656 09c941bd2f8c015e7535a2aafd16038755519b45eeb95ac109244a24348c167b',
  'a receipt ack': '36 66f37653a1096825639656aecc71a2b4637dd81714415f021835dfef880e256c',
  'nibbles and hex, odd and even': '47 c8b5d5b14f98827ec2d37be76503495b6fdfffca776dc61bb243305cedfdd936',
  'lowercase hex is a raw string': '40 1fb0db579fffb677be2f306181be9e5cf2e95bba894140f92c7e8cf74386637a',
  'empty, null and undefined': '12 c05fdd3457f82f04b16b07c1aa3faa1da9045cb3bbe5d9c35c940ef42c4a7346',
  'string content': '25 c10683ba40a77313eb563a035517542d5df3bc367db3b3f1791f01eb5c10c3e2',
  'raw string of 300 bytes': '316 6e4a9765e4fe56b8999c964e52f1393ca30fd66b0c58f20a47519d5e03466086',
  'binary content of 70,000 bytes': '70010 58ab37eeddaa1f17c872f73432f798a0d26edfa70410eabb18eac12ffd899167',
  'binary content of 1,100,000 bytes': '1100011 548278220024bb9ff56dd22d6c78886ef3ebb87cf55af8d084535aadba0957ae',
  'a list of 300 children': '2773 b1ce5b2c73a094ef42ac97e29dfff764a43bf1125f861b8824b32d244b60b387',
  'an empty list and skipped children': '14 106e2114c956476c91895f1fea8b06aaa5c9692e779add2d630382f8e0975ff4',
  'JIDs of every kind': '105 2e6da259dd783b5d98d2b21af52351e51ffcf65efc235bff9910ce4608628027',
  'prototype names as strings': '10 2b15cfc6d1bc9afdda485499bd781ef78013bf1b8ef7be00a2df572ac1faa7e5',
};

describe("Baileys' binary encoder, as patched", () => {
  it.each(binaryNodeCases())('writes the bytes rc14 wrote: %s', (name, node) => {
    const bytes = encodeBinaryNode(node);
    expect(`${bytes.length} ${createHash('sha256').update(bytes).digest('hex')}`).toBe(RC14_BYTES[name]);
  });

  it('refuses what rc14 refused, with the same message', () => {
    for (const [node, message] of refusedBinaryNodes()) expect(() => encodeBinaryNode(node)).toThrow(message);
  });

  it('writes a stanza that decodes to itself', async () => {
    const [, stanza] = binaryNodeCases()[0] ?? [];
    if (!stanza) throw new Error('no stanza');
    // binary content decodes as a Buffer, whatever Uint8Array it was written from
    const asBuffers = (node: BinaryNode): BinaryNode => ({
      ...node,
      content: Array.isArray(node.content)
        ? node.content.map(asBuffers)
        : node.content instanceof Uint8Array
          ? Buffer.from(node.content)
          : node.content,
    });
    expect(await decodeBinaryNode(encodeBinaryNode(stanza))).toEqual(asBuffers(stanza));
  });

  it('starts from the bytes it is given, and gives each call its own buffer', () => {
    const ack = { tag: 'ack', attrs: { id: '1' } };
    const first = encodeBinaryNode(ack, undefined, [2, 300]);
    const second = encodeBinaryNode({ tag: 'iq', attrs: { id: '2' } });
    expect([...first.subarray(0, 2)]).toEqual([2, 300 & 0xff]);
    expect(first.subarray(2)).toEqual(encodeBinaryNode(ack).subarray(1));
    expect(second[0]).toBe(0);
    expect(first.buffer === second.buffer && first.byteOffset === second.byteOffset).toBe(false);
  });
});
