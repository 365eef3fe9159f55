import { getBinaryNodeChild, getBinaryNodeChildren } from 'baileys';
import type { BinaryNode } from 'baileys';
import type { Addressing } from './addressing.ts';
import type { Directory, VirtualPhone } from './directory.ts';
import type { GroupService } from './groups.ts';
import type { Connection, SandboxServer } from './server.ts';
import { newTag } from './server.ts';

type GroupAnswer = ReturnType<GroupService['answer']>;

const PARTICIPANT_CHANGES = new Set(['add', 'remove', 'promote', 'demote']);
const SETTINGS = new Set(['announcement', 'not_announcement', 'locked', 'unlocked']);

/**
 * What WhatsApp's group service tells members' devices after a w:g2 change: a `w:gp2` notification.
 * Baileys turns `create` into groups.upsert (so a member added later gets one too) and the
 * participant changes into group-participants.update.
 */
export class GroupNotifier {
  constructor(private readonly network: { groups: GroupService; directory: Directory; server: SandboxServer; addressing: Addressing }) {}

  /** Runs a w:g2 change and, when it succeeded, notifies the devices of everyone it concerns. */
  around(conn: Connection, iq: BinaryNode, run: () => GroupAnswer): GroupAnswer {
    const to = iq.attrs.to ?? '';
    const child = Array.isArray(iq.content) ? iq.content[0] : undefined;
    const leaving = to === '@g.us' && child?.tag === 'leave' ? getBinaryNodeChildren(child, 'group').map((g) => g.attrs.id ?? '') : [];
    const before = new Map([to, ...leaving].map((id) => [id, this.network.groups.members(id)]));
    const answer = run();
    const actor = conn.phone;
    if (!actor || !child || iq.attrs.type !== 'set' || !(Array.isArray(answer) || answer === 'result')) return answer;
    if (to === '@g.us') {
      if (child.tag === 'create' && Array.isArray(answer)) {
        const id = `${answer[0]?.attrs.id ?? ''}@g.us`;
        this.send(conn, this.network.groups.members(id), this.notice(id, actor, this.createNode(id)));
      }
      for (const id of leaving) {
        const removal = { tag: 'remove', attrs: {}, content: [this.network.groups.memberNode(actor.jid)] };
        this.send(conn, before.get(id) ?? [], this.notice(id, actor, removal));
      }
      return answer;
    }
    const group = this.network.groups.groups.get(to);
    if (!group) return answer;
    const members = this.network.groups.members(to);
    if (PARTICIPANT_CHANGES.has(child.tag) && Array.isArray(answer)) {
      const changed = getBinaryNodeChildren(answer[0], 'participant')
        .filter((p) => !p.attrs.error)
        .map((p) => p.attrs.jid ?? '');
      if (changed.length === 0) return answer;
      const change = { tag: child.tag, attrs: {}, content: changed.map((jid) => this.network.groups.memberNode(jid)) };
      const earlier = before.get(to) ?? [];
      if (child.tag === 'add') {
        const added = members.filter((p) => !earlier.includes(p));
        this.send(conn, earlier, this.notice(to, actor, change));
        this.send(conn, added, this.notice(to, actor, this.createNode(to)));
      } else {
        this.send(conn, child.tag === 'remove' ? earlier : members, this.notice(to, actor, change));
      }
    } else if (child.tag === 'subject') {
      this.send(
        conn,
        members,
        this.notice(to, actor, {
          tag: 'subject',
          attrs: {
            subject: group.subject,
            ...this.network.addressing.groupActor(actor, 's_o'),
            s_t: String(Math.floor(Date.now() / 1000)),
          },
        }),
      );
    } else if (child.tag === 'description') {
      const body = getBinaryNodeChild(child, 'body');
      this.send(
        conn,
        members,
        this.notice(to, actor, { tag: 'description', attrs: { id: child.attrs.id ?? newTag() }, content: body ? [body] : [] }),
      );
    } else if (SETTINGS.has(child.tag)) {
      this.send(conn, members, this.notice(to, actor, { tag: child.tag, attrs: {} }));
    }
    return answer;
  }

  private createNode(groupId: string): BinaryNode {
    const group = this.network.groups.groups.get(groupId);
    return { tag: 'create', attrs: {}, content: group ? [this.network.groups.groupNode(group)] : [] };
  }

  private notice(groupId: string, actor: VirtualPhone, child: BinaryNode): BinaryNode {
    return {
      tag: 'notification',
      attrs: {
        from: groupId,
        type: 'w:gp2',
        id: newTag(),
        t: String(Math.floor(Date.now() / 1000)),
        ...this.network.addressing.groupActor(actor, 'participant'),
        notify: actor.name,
      },
      content: [child],
    };
  }

  /** Every open device of these phones but the one that made the change. */
  private send(actorConn: Connection, phones: VirtualPhone[], node: BinaryNode): void {
    for (const phone of new Set(phones)) {
      for (const conn of this.network.server.connectionsOf(phone.number)) {
        if (conn !== actorConn) conn.send(node);
      }
    }
  }
}
