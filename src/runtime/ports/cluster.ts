/** A session this node took, with the fencing epoch of its claim. */
export interface Claim {
  sessionId: string;
  epoch: number;
}

/**
 * What a node's writes of a session's Signal keys and credentials are conditioned on: the database must
 * still hold this node's claim with this epoch, else the write is refused (a stale owner cannot roll
 * back the new owner's ratchets).
 */
export interface Fence {
  nodeId: string;
  epoch: number;
}

/** What an ownership change asks of the rest of the node (runtime/root/main.ts wires it). */
export interface OwnershipHandlers {
  /** sessions claimed after the start: link them and take over their pending messages */
  gained: (claims: Claim[]) => void;
  /** sessions this node may no longer link (another node claimed them, the lease lapsed, or they are handed over): close at once */
  lost: (sessionIds: string[]) => Promise<void> | void;
}

/**
 * Which sessions this node links (runtime/cluster/). On SQLite, and in a process that is not part of a
 * cluster, the node owns every session; on PostgreSQL each session has one owner through a lease row
 * whose epoch grows on every claim, so a node that lost a session is told so by the database.
 */
export interface Ownership {
  readonly nodeId: string;
  readonly clustered: boolean;
  /** this node holds a live claim on the session (by its own clock: a lapsed lease is not held) */
  owns(sessionId: string): boolean;
  /** the sessions this node holds, or undefined when it owns every session */
  owned(): string[] | undefined;
  /** right before a send: the database still holds this node's claim with its epoch, unexpired */
  confirm(sessionId: string): Promise<boolean>;
  /** the claim a link of the session opened now writes its keys under; undefined outside a cluster (nothing is checked) */
  fence(sessionId: string): Fence | undefined;
  /**
   * Where a request about the session is served: 'here' (claiming it first when no live node holds it),
   * the base URL of the owner, or 'unknown' when the owner has no address yet.
   */
  route(sessionId: string): Promise<{ at: 'here' } | { at: 'owner'; address: string; nodeId: string } | { at: 'unknown' }>;
  /** the node with this id still runs and holds its registration (a node that stopped, or was killed or paused past its TTL, does not) */
  alive(nodeId: string): Promise<boolean>;
  /** how many leases were renewed, lost and handed over (balance, shutdown) so far, for /metrics */
  readonly counts: { renewals: number; losses: number; handovers: number };
}
