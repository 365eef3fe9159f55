import type { NotOnNetworkErrorName } from '../ports/network.ts';

/** A 1:1 send to a user the network has no devices for: nothing was sent. */
export class NotOnNetworkError extends Error {
  override readonly name: NotOnNetworkErrorName = 'NotOnNetworkError';
}
