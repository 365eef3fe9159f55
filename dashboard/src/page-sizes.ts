/**
 * The page sizes the dashboard passes in variables. The service's cost limit multiplies a connection's
 * cost by its page size, so these keep every query well inside it (test/unit/dashboard-limits.test.ts).
 */
export const PAGE_SIZES = {
  /** a session's outgoing messages, each "Show more" adding as many */
  messages: 20,
  /** where "Show more" stops: the newest this many, narrowed with the filters */
  messagesShown: 100,
  /** a session's pending (scheduled or queued) messages */
  pending: 50,
  /** a session's send queue, in the order it goes */
  queue: 20,
  /** the address book */
  contacts: 20,
  /** the inbox's chat list, each "More chats" adding as many */
  chats: 30,
  /** a thread's messages, each "Older messages" adding as many (a page of 30 would cost over half the limit) */
  thread: 25,
  /** search results shown */
  search: 20,
} as const;
