import { randomBytes, randomInt } from 'node:crypto';
import { getBinaryNodeChild, getBinaryNodeChildren } from 'baileys';
import type { BinaryNode } from 'baileys';
import type { Addressing } from './addressing.ts';
import type { Directory, VirtualPhone } from './directory.ts';

export type Role = 'superadmin' | 'admin' | null;

export interface SandboxGroup {
  id: string;
  subject: string;
  desc: string;
  creator: string;
  creation: number;
  /** members by phone-number user JID */
  participants: Map<string, Role>;
  announce: boolean;
  locked: boolean;
  inviteCode: string;
}

export interface GroupView {
  id: string;
  subject: string;
  desc: string;
  announce: boolean;
  inviteCode: string;
  addressingMode: 'lid' | 'pn';
  participants: Array<{ jid: string; lid?: string; admin: Role }>;
}

const now = () => Math.floor(Date.now() / 1000);
const newCode = () => randomBytes(16).toString('base64url').slice(0, 22);

type Answer = BinaryNode[] | 'result' | { error: number; text: string };

/**
 * w:g2: the sandbox's group service. Members are kept by phone-number JID; on the wire a group is
 * `addressing_mode` lid (members by LID with their phone numbers) or pn, as the network is.
 */
export class GroupService {
  readonly groups = new Map<string, SandboxGroup>();

  constructor(
    private readonly directory: Directory,
    private readonly addressing: Addressing,
  ) {}

  view(group: SandboxGroup): GroupView {
    return {
      id: group.id,
      subject: group.subject,
      desc: group.desc,
      announce: group.announce,
      inviteCode: group.inviteCode,
      addressingMode: this.addressing.mode,
      participants: [...group.participants].map(([jid, admin]) => {
        const lid = this.directory.find(jid)?.lid;
        return { jid, ...(lid ? { lid } : {}), admin };
      }),
    };
  }

  /** A member (kept by phone-number JID) as a `participant` child, addressed as the group is. */
  memberNode(jid: string, extra: Record<string, string> = {}): BinaryNode {
    const phone = this.directory.find(jid);
    return { tag: 'participant', attrs: { ...(phone ? this.addressing.member(phone) : { jid }), ...extra } };
  }

  /** Someone named in a group's attributes (`creator`, `s_o`), with `<name>_pn` beside a LID. */
  private actorAttrs(jid: string, name: string): Record<string, string> {
    const phone = this.directory.find(jid);
    return phone ? this.addressing.groupActor(phone, name) : { [name]: jid };
  }

  groupNode(group: SandboxGroup): BinaryNode {
    return {
      tag: 'group',
      attrs: {
        id: group.id.split('@')[0] ?? group.id,
        subject: group.subject,
        ...this.actorAttrs(group.creator, 'creator'),
        creation: String(group.creation),
        s_t: String(group.creation),
        ...this.actorAttrs(group.creator, 's_o'),
        addressing_mode: this.addressing.mode,
        size: String(group.participants.size),
      },
      content: [
        ...[...group.participants].map(([jid, role]) => this.memberNode(jid, role ? { type: role } : {})),
        ...(group.desc
          ? [
              {
                tag: 'description',
                attrs: { id: 'd1', t: String(now()) },
                content: [{ tag: 'body', attrs: {}, content: Buffer.from(group.desc) }],
              },
            ]
          : []),
        ...(group.announce ? [{ tag: 'announcement', attrs: {} }] : []),
        ...(group.locked ? [{ tag: 'locked', attrs: {} }] : []),
      ],
    };
  }

  /** Members' phones, for fan-out of group messages. */
  members(groupId: string): VirtualPhone[] {
    const group = this.groups.get(groupId);
    if (!group) return [];
    return [...group.participants.keys()].map((jid) => this.directory.find(jid)).filter((p): p is VirtualPhone => Boolean(p));
  }

  answer(requester: VirtualPhone, iq: BinaryNode): Answer {
    const to = iq.attrs.to ?? '';
    const child = Array.isArray(iq.content) ? iq.content[0] : undefined;
    if (!child) return { error: 400, text: 'bad-request' };
    const me = requester.jid;
    if (to === '@g.us') {
      if (child.tag === 'create') return this.create(requester, child);
      if (child.tag === 'participating') {
        const mine = [...this.groups.values()].filter((g) => g.participants.has(me));
        return [{ tag: 'groups', attrs: {}, content: mine.map((g) => this.groupNode(g)) }];
      }
      if (child.tag === 'leave') {
        // as every other group IQ: a group that does not exist, or that we are not in, is item-not-found
        const leaving = getBinaryNodeChildren(child, 'group').map((node) => this.groups.get(node.attrs.id ?? ''));
        if (leaving.length === 0) return { error: 400, text: 'bad-request' };
        if (leaving.some((group) => !group?.participants.has(me))) return { error: 404, text: 'item-not-found' };
        for (const group of leaving) group?.participants.delete(me);
        return 'result';
      }
      if (child.tag === 'invite' && child.attrs.code) {
        const group = [...this.groups.values()].find((g) => g.inviteCode === child.attrs.code);
        if (!group) return { error: 404, text: 'item-not-found' };
        if (!group.participants.has(me)) group.participants.set(me, null);
        return [{ tag: 'group', attrs: { jid: group.id } }];
      }
      return { error: 501, text: 'feature-not-implemented' };
    }
    const group = this.groups.get(to);
    if (!group?.participants.has(me)) return { error: 404, text: 'item-not-found' };
    const isAdmin = group.participants.get(me) !== null;
    switch (child.tag) {
      case 'query':
        return [this.groupNode(group)];
      case 'subject':
        group.subject = Buffer.from((child.content as Uint8Array | undefined) ?? []).toString();
        return 'result';
      case 'description': {
        const body = getBinaryNodeChild(child, 'body')?.content;
        group.desc = body instanceof Uint8Array ? Buffer.from(body).toString() : typeof body === 'string' ? body : '';
        return 'result';
      }
      case 'invite':
        if (iq.attrs.type === 'set') group.inviteCode = newCode();
        return [{ tag: 'invite', attrs: { code: group.inviteCode } }];
      case 'announcement':
      case 'not_announcement':
        if (!isAdmin) return { error: 403, text: 'forbidden' };
        group.announce = child.tag === 'announcement';
        return 'result';
      case 'locked':
      case 'unlocked':
        if (!isAdmin) return { error: 403, text: 'forbidden' };
        group.locked = child.tag === 'locked';
        return 'result';
      case 'add':
      case 'remove':
      case 'promote':
      case 'demote':
        if (!isAdmin) return { error: 403, text: 'forbidden' };
        return [
          {
            tag: child.tag,
            attrs: {},
            content: getBinaryNodeChildren(child, 'participant').map((p) => this.change(group, child.tag, p.attrs.jid ?? '')),
          },
        ];
      default:
        return { error: 501, text: 'feature-not-implemented' };
    }
  }

  private change(group: SandboxGroup, action: string, jid: string): BinaryNode {
    const phone = this.directory.find(jid);
    const member = phone?.jid ?? jid;
    const fail = (code: string) => ({ tag: 'participant', attrs: { jid, error: code } });
    if (!phone) return fail('404');
    if (action === 'add') {
      if (group.participants.has(member)) return fail('409');
      group.participants.set(member, null);
    } else if (!group.participants.has(member)) return fail('404');
    else if (action === 'remove') group.participants.delete(member);
    else if (action === 'promote') group.participants.set(member, group.participants.get(member) === 'superadmin' ? 'superadmin' : 'admin');
    else if (action === 'demote') group.participants.set(member, null);
    // On a lid network the answer names the member as the group does (LID, phone_number beside it).
    return this.addressing.mode === 'lid' ? this.memberNode(member) : { tag: 'participant', attrs: { jid: member } };
  }

  private create(creator: VirtualPhone, node: BinaryNode): Answer {
    const id = `120363${String(randomInt(10 ** 11, 10 ** 12))}@g.us`;
    const participants = new Map<string, Role>([[creator.jid, 'superadmin']]);
    for (const p of getBinaryNodeChildren(node, 'participant')) {
      const phone = this.directory.find(p.attrs.jid ?? '');
      if (phone && phone !== creator) participants.set(phone.jid, null);
    }
    const group: SandboxGroup = {
      id,
      subject: node.attrs.subject ?? '',
      desc: '',
      creator: creator.jid,
      creation: now(),
      participants,
      announce: false,
      locked: false,
      inviteCode: newCode(),
    };
    this.groups.set(id, group);
    return [this.groupNode(group)];
  }
}
