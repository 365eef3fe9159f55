import type { MediaGoneErrorName } from '../ports/network.ts';

/** The media host answered that it no longer has the file (404 or 410). */
export class MediaGoneError extends Error {
  override readonly name: MediaGoneErrorName = 'MediaGoneError';
}
