import type { Logger } from 'pino';

/** endpoints remembered at most; beyond, the one failing longest is forgotten (it warns again at its next failure) */
const MAX_FAILING = 10_000;

/** Where an endpoint delivers, without the query string, which can carry a token. */
const shownUrl = (url: string): string => {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
};

interface Failing {
  /** when the last warning was written */
  warnedAt: number;
  /** failures since that warning, that one's excluded */
  since: number;
}

/**
 * The log of failing webhook endpoints: a warning at an endpoint's first failure, then at most one per
 * `everyMs` while it keeps failing (with how many failures it stands for), and an info line when it
 * delivers again. A receiver that is down fails every delivery and every retry of every event; a line
 * each would bury the rest of the log.
 */
export class EndpointFailureLog {
  private readonly failing = new Map<string, Failing>();

  constructor(
    private readonly logger: Logger,
    private readonly everyMs: number,
  ) {}

  failed(endpoint: { id: string; accountId: string; url: string }, at: Date, lastError: string): void {
    const now = at.getTime();
    const known = this.failing.get(endpoint.id);
    if (known && now - known.warnedAt < this.everyMs) {
      known.since += 1;
      return;
    }
    const failures = (known?.since ?? 0) + 1;
    this.failing.delete(endpoint.id);
    if (this.failing.size >= MAX_FAILING) {
      const oldest = this.failing.keys().next().value;
      if (oldest !== undefined) this.failing.delete(oldest);
    }
    this.failing.set(endpoint.id, { warnedAt: now, since: 0 });
    this.logger.warn(
      { endpointId: endpoint.id, accountId: endpoint.accountId, url: shownUrl(endpoint.url), lastError, failures, everyMs: this.everyMs },
      known
        ? 'webhook endpoint still failing; its deliveries are retried (failures: how many since the last warning)'
        : 'webhook endpoint failing; its deliveries are retried (one warning per endpoint every everyMs while it fails)',
    );
  }

  delivered(endpoint: { id: string; accountId: string; url: string }): void {
    if (!this.failing.delete(endpoint.id)) return;
    this.logger.info(
      { endpointId: endpoint.id, accountId: endpoint.accountId, url: shownUrl(endpoint.url) },
      'webhook endpoint delivering again',
    );
  }

  /** The endpoint is disabled or gone: its own line says so. */
  forget(endpointId: string): void {
    this.failing.delete(endpointId);
  }
}
