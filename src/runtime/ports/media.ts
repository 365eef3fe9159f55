export interface FetchedMedia {
  data: Buffer;
  mimetype?: string;
  fileName?: string;
}

/** Fetches a file the caller named by URL (runtime/media-fetch.ts); `field` names the input in errors. */
export type MediaFetcher = (url: string, field?: string) => Promise<FetchedMedia>;

/**
 * The domain's rules and errors for URLs the service calls on a user's behalf (media, webhooks), given
 * to the fetchers by the root so that runtime code raises the domain's errors without importing them.
 */
export interface UrlRules {
  isPrivateAddress: (address: string) => boolean;
  /** an IP literal outside public unicast, or a localhost name: known from the URL's text alone */
  isLiteralPrivateHost: (rawUrl: string) => boolean;
  /** an input that may not be fetched (VALIDATION_FAILED on `field`) */
  refused: (field: string, message: string) => Error;
  /** a fetch that failed on the way (NETWORK_ERROR) */
  unreachable: (message: string) => Error;
  /** whether `err` is one of the errors above, to pass on unchanged */
  isRuleError: (err: unknown) => boolean;
  privateMessage: string;
}
