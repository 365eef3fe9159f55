-- Hand-written: a trigram full-text index for substring search on SQLite. It keeps its own copy of
-- searchText (and the account, unindexed), so counting matches never reads the wide Contact rows.
-- Triggers keep it in step with Contact, keyed by Contact's rowid (Contact has no INTEGER PRIMARY KEY, so
-- a VACUUM could renumber rowids: rebuild this table after one with the INSERT below).
CREATE VIRTUAL TABLE "ContactSearch" USING fts5("searchText", "accountId" UNINDEXED, tokenize='trigram', detail='none');
INSERT INTO "ContactSearch"(rowid, "searchText", "accountId") SELECT rowid, "searchText", "accountId" FROM "Contact";
CREATE TRIGGER "Contact_search_insert" AFTER INSERT ON "Contact" BEGIN
  INSERT INTO "ContactSearch"(rowid, "searchText", "accountId") VALUES (new.rowid, new."searchText", new."accountId");
END;
CREATE TRIGGER "Contact_search_delete" AFTER DELETE ON "Contact" BEGIN
  DELETE FROM "ContactSearch" WHERE rowid = old.rowid;
END;
CREATE TRIGGER "Contact_search_update" AFTER UPDATE OF "searchText" ON "Contact" BEGIN
  UPDATE "ContactSearch" SET "searchText" = new."searchText" WHERE rowid = old.rowid;
END;
