-- Hand-written: the trigram table keeps token positions (detail='full'), so a search is a phrase MATCH
-- answered from the index instead of a LIKE that re-reads every candidate's text, and the account of
-- each contact moves to a narrow table of its own, so counting the matches of a broad term reads neither
-- the trigram table's copy of the text nor the wide Contact rows.
-- Both are keyed by Contact's rowid (Contact has no INTEGER PRIMARY KEY, so a VACUUM could renumber
-- rowids: rebuild both after one with the INSERTs below).
DROP TRIGGER "Contact_search_insert";
DROP TRIGGER "Contact_search_delete";
DROP TRIGGER "Contact_search_update";
DROP TABLE "ContactSearch";
CREATE VIRTUAL TABLE "ContactSearch" USING fts5("searchText", tokenize='trigram', detail='full');
CREATE TABLE "ContactSearchOwner" ("id" INTEGER NOT NULL PRIMARY KEY, "accountId" TEXT NOT NULL);
INSERT INTO "ContactSearch"(rowid, "searchText") SELECT rowid, "searchText" FROM "Contact";
INSERT INTO "ContactSearchOwner"("id", "accountId") SELECT rowid, "accountId" FROM "Contact";
CREATE TRIGGER "Contact_search_insert" AFTER INSERT ON "Contact" BEGIN
  INSERT INTO "ContactSearch"(rowid, "searchText") VALUES (new.rowid, new."searchText");
  INSERT INTO "ContactSearchOwner"("id", "accountId") VALUES (new.rowid, new."accountId");
END;
CREATE TRIGGER "Contact_search_delete" AFTER DELETE ON "Contact" BEGIN
  DELETE FROM "ContactSearch" WHERE rowid = old.rowid;
  DELETE FROM "ContactSearchOwner" WHERE "id" = old.rowid;
END;
CREATE TRIGGER "Contact_search_update" AFTER UPDATE OF "searchText" ON "Contact" BEGIN
  UPDATE "ContactSearch" SET "searchText" = new."searchText" WHERE rowid = old.rowid;
END;
