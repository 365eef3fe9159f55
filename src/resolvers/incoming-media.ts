import { createHash } from 'node:crypto';
import type { MediaGoneErrorName } from '../runtime/ports/network.ts';
import type { RequestContext } from './context.ts';
import { DomainError } from './errors.ts';
import { ownSessionId } from './sessions.ts';

/** A received file on its way to the client: what the headers say, and the decrypted bytes as they are read. */
export interface IncomingMediaDownload {
  mimetype: string;
  size: number;
  fileName: string | null;
  stream: ReadableStream<Uint8Array>;
}

const spanOf = (ms: number): string => {
  const hours = ms / 3_600_000;
  if (hours >= 1 && Number.isInteger(hours)) return `${hours} hour${hours === 1 ? '' : 's'}`;
  return `${Math.round(ms / 1000)} s`;
};

/**
 * Passes the file on, holding back its last chunk until its length and SHA-256 match what the sender
 * stated: a client that receives the whole body received the right file; otherwise the body is cut.
 */
const checked = (size: number, sha256: string | null): TransformStream<Uint8Array, Uint8Array> => {
  const hash = createHash('sha256');
  let seen = 0;
  let held: Uint8Array | null = null;
  return new TransformStream({
    transform(chunk, controller) {
      seen += chunk.length;
      if (size > 0 && seen > size) throw new Error(`the file is longer than the ${size} bytes its sender stated`);
      hash.update(chunk);
      if (held) controller.enqueue(held);
      held = chunk;
    },
    flush(controller) {
      if (size > 0 && seen !== size) throw new Error(`the file has ${seen} bytes, not the ${size} its sender stated`);
      if (sha256 && hash.digest('base64') !== sha256) throw new Error('the file does not match the SHA-256 its sender stated');
      if (held) controller.enqueue(held);
    },
  });
};

/**
 * A received file, fetched again from the network's media host and decrypted as it streams. Answers
 * 404 for another account's session, an unknown message, or a file past the retention window (with
 * a message saying so), and 410 MEDIA_GONE when the media host no longer has it.
 */
export const downloadIncomingMedia = async (ctx: RequestContext, sessionId: string, messageId: string): Promise<IncomingMediaDownload> => {
  await ownSessionId(ctx, sessionId);
  const retention = spanOf(ctx.incomingMedia.retentionMs);
  const media = await ctx.incomingMedia.find(sessionId, messageId);
  if (!media) {
    throw new DomainError(
      'NOT_FOUND',
      `No received media with this message id in this session (received files can be downloaded for ${retention}, then they expire)`,
    );
  }
  if (ctx.incomingMedia.expired(media)) {
    throw new DomainError('NOT_FOUND', `This received media expired: files can be downloaded for ${retention} after they arrive`);
  }
  try {
    const stream = await ctx.sessions.downloadMedia(media.locator);
    return {
      mimetype: media.mimetype,
      size: media.size,
      fileName: media.fileName,
      stream: stream.pipeThrough(checked(media.size, media.fileSha256)),
    };
  } catch (err) {
    if (err instanceof Error && err.name === ('MediaGoneError' satisfies MediaGoneErrorName)) {
      throw new DomainError('MEDIA_GONE', `The network's media host no longer has this file (${err.message})`);
    }
    ctx.logger.warn({ err, sessionId, messageId }, 'downloading a received file failed');
    throw new DomainError(
      'NETWORK_ERROR',
      `The file could not be fetched from the network's media host: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
};
