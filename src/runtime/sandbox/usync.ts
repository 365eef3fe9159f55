import { getBinaryNodeChild, getBinaryNodeChildren } from 'baileys';
import type { BinaryNode } from 'baileys';
import type { Directory, VirtualPhone } from './directory.ts';

/** Device ids the network lists for a phone: its primary (0) and every companion still linked. */
export const deviceIdsOf = (phone: VirtualPhone): number[] => [
  0,
  ...[...phone.devices.values()].filter((d) => !d.loggedOut).map((d) => d.deviceId),
];

const contactOf = (user: BinaryNode): string | undefined => {
  const contact = getBinaryNodeChild(user, 'contact');
  const content = contact?.content;
  if (content instanceof Uint8Array) return Buffer.from(content).toString();
  return typeof content === 'string' ? content : undefined;
};

/**
 * usync: for each user asked about, the protocols asked for (devices, lid, contact...). Numbers the
 * directory does not know are not on WhatsApp. A network that does not reveal LIDs answers `lid` only
 * for a user asked about by LID.
 */
export const answerUsync = (directory: Directory, iq: BinaryNode, revealLids = true): BinaryNode[] => {
  const usync = getBinaryNodeChild(iq, 'usync');
  const asked = new Set(getBinaryNodeChildren(getBinaryNodeChild(usync, 'query'), '').map((n) => n.tag));
  const queryNode = getBinaryNodeChild(usync, 'query');
  const protocols = Array.isArray(queryNode?.content) ? queryNode.content.map((n) => n.tag) : [...asked];
  const users = getBinaryNodeChildren(getBinaryNodeChild(usync, 'list'), 'user').map((user) => {
    const phoneNumber = contactOf(user)?.replace(/^\+/, '');
    const jid = user.attrs.jid ?? (phoneNumber ? `${phoneNumber}@s.whatsapp.net` : '');
    const phone = phoneNumber ? directory.get(phoneNumber) : directory.find(jid);
    const content: BinaryNode[] = [];
    for (const protocol of protocols) {
      if (protocol === 'devices') {
        content.push({
          tag: 'devices',
          attrs: {},
          content: [
            {
              tag: 'device-list',
              attrs: {},
              content: (phone ? deviceIdsOf(phone) : []).map((id) => ({
                tag: 'device',
                attrs: { id: String(id), ...(id === 0 ? {} : { 'key-index': String(id) }) },
              })),
            },
          ],
        });
      } else if (protocol === 'lid') {
        if (phone && (revealLids || jid.endsWith('@lid'))) content.push({ tag: 'lid', attrs: { val: phone.lid } });
      } else if (protocol === 'contact') {
        content.push({ tag: 'contact', attrs: { type: phone ? 'in' : 'out' } });
      } else if (protocol === 'status') {
        content.push({ tag: 'status', attrs: { t: '0' }, content: Buffer.from('') });
      } else if (protocol === 'disappearing_mode') {
        content.push({ tag: 'disappearing_mode', attrs: { duration: '0', t: '0' } });
      }
    }
    return { tag: 'user', attrs: { jid: phone && !user.attrs.jid ? phone.jid : jid }, content };
  });
  return [
    {
      tag: 'usync',
      attrs: {
        sid: usync?.attrs.sid ?? '',
        mode: usync?.attrs.mode ?? 'query',
        context: usync?.attrs.context ?? 'interactive',
        index: '0',
        last: 'true',
      },
      content: [
        { tag: 'result', attrs: {}, content: protocols.map((p) => ({ tag: p, attrs: {} })) },
        { tag: 'list', attrs: {}, content: users },
      ],
    },
  ];
};
