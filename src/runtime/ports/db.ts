import type { Prisma, PrismaClient } from '../../generated/sqlite/client.ts';

/** The client type the code is written against; the PostgreSQL client has the same API. */
export type Db = PrismaClient;

/** Raw statements written in one transaction (runtime/db/raw-writes.ts); one statement runs alone. */
export type RawWrites = (statements: Prisma.Sql[]) => Promise<void>;

export interface ContactSearchQuery {
  accountId: string;
  /** the text to find inside a contact's searchText (any case) */
  search: string;
  tag?: string;
  limit: number;
  skip: number;
}

/** One page of matching contact ids in the list's order, and how many match in all. */
export interface ContactSearchPage {
  ids: string[];
  total: number;
}

/** A free-text contact search; runtime/db/contact-search.ts holds each dialect's SQL. */
export type ContactSearch = (db: Db, query: ContactSearchQuery) => Promise<ContactSearchPage>;
