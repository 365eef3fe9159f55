import { randomInt } from 'node:crypto';
import { getBinaryNodeChild } from 'baileys';
import type { BinaryNode } from 'baileys';
import type { Directory } from './directory.ts';
import type { GroupService } from './groups.ts';
import type { MediaHost } from './media.ts';
import type { Connection } from './server.ts';

/** A 1x1 PNG: what a picture set without bytes shows. */
const BLANK_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

export interface PictureView {
  /** whose: a phone number or a group JID */
  owner: string;
  /** the picture's id (WhatsApp's changes with each new picture) */
  id: string;
  /** the owner hides it: the network answers 401 not-authorized instead of its URL */
  hidden: boolean;
  /** the full picture and its thumbnail on the media host */
  url: string;
  previewUrl: string;
}

interface Picture {
  id: string;
  hidden: boolean;
  path: string;
  previewPath: string;
}

export type IqRefusal = { error: number; text: string };

const error = (code: number, text: string): IqRefusal => ({ error: code, text });

/**
 * Profile pictures of phones and groups (w:profile:picture). A phone or group with none answers 404
 * item-not-found and a hidden one 401 not-authorized, as WhatsApp does; rc14's profilePictureUrl throws
 * both as a Boom whose data is the code. Kept in memory only, as the media host's files are.
 */
export class SandboxPictures {
  /** by phone number or group JID */
  private readonly pictures = new Map<string, Picture>();

  constructor(
    private readonly deps: {
      directory: Directory;
      groups: GroupService;
      media: MediaHost;
    },
  ) {}

  /** The phone (a number) or group (a JID) gets a new picture, hidden or not; its bytes default to a blank PNG. */
  set(owner: string, options: { hidden?: boolean; data?: Buffer; mimetype?: string } = {}): PictureView {
    this.requireOwner(owner);
    this.remove(owner);
    const data = options.data ?? BLANK_PNG;
    const mimetype = options.mimetype ?? 'image/png';
    const picture: Picture = {
      id: String(randomInt(1_000_000_000, 2_000_000_000)),
      hidden: options.hidden ?? false,
      path: this.deps.media.publish(data, mimetype),
      // WhatsApp's preview is a 96x96 thumbnail; the sandbox serves the same bytes under another path
      previewPath: this.deps.media.publish(data, mimetype),
    };
    this.pictures.set(owner, picture);
    return this.view(owner, picture);
  }

  /** The owner removes its picture: its URLs answer 404 from then on. */
  remove(owner: string): boolean {
    const picture = this.pictures.get(owner);
    if (!picture) return false;
    this.deps.media.unpublish(picture.path);
    this.deps.media.unpublish(picture.previewPath);
    this.pictures.delete(owner);
    return true;
  }

  get(owner: string): PictureView | undefined {
    const picture = this.pictures.get(owner);
    return picture ? this.view(owner, picture) : undefined;
  }

  /** `<iq xmlns="w:profile:picture" target=…><picture type="image|preview" query="url"/></iq>` */
  answer(conn: Connection, iq: BinaryNode): BinaryNode[] | 'unmodelled' | IqRefusal {
    const asked = getBinaryNodeChild(iq, 'picture');
    const target = iq.attrs.target;
    if (!asked || !target || iq.attrs.type !== 'get') return 'unmodelled';
    const owner = this.ownerOf(target);
    if (owner === undefined) return error(404, 'item-not-found');
    if (target.endsWith('@g.us')) {
      const group = this.deps.groups.groups.get(target);
      // our guess: a group's picture is its members' to see
      if (!conn.phone || !group?.participants.has(conn.phone.jid)) return error(401, 'not-authorized');
    }
    const picture = this.pictures.get(owner);
    if (!picture) return error(404, 'item-not-found');
    if (picture.hidden && owner !== conn.phone?.number) return error(401, 'not-authorized');
    const preview = asked.attrs.type === 'preview';
    const path = preview ? picture.previewPath : picture.path;
    const host = conn.mediaHostname ?? this.deps.media.hostname;
    return [
      {
        tag: 'picture',
        attrs: { id: picture.id, type: preview ? 'preview' : 'image', url: `https://${host}${path}`, direct_path: path },
      },
    ];
  }

  /** A phone's number for a user or LID JID, the group JID for a group; undefined when the network has no such one. */
  private ownerOf(jid: string): string | undefined {
    if (jid.endsWith('@g.us')) return this.deps.groups.groups.has(jid) ? jid : undefined;
    return this.deps.directory.find(jid)?.number;
  }

  private requireOwner(owner: string): void {
    if (owner.endsWith('@g.us') ? !this.deps.groups.groups.has(owner) : !this.deps.directory.get(owner)) {
      throw new Error(`no phone or group ${owner}`);
    }
  }

  private view(owner: string, picture: Picture): PictureView {
    const base = `https://${this.deps.media.hostname}`;
    return { owner, id: picture.id, hidden: picture.hidden, url: `${base}${picture.path}`, previewUrl: `${base}${picture.previewPath}` };
  }
}
