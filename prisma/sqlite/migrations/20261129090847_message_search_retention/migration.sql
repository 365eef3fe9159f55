-- Hand-written: full-text search over the message store (FTS5, which the schema cannot express), and the
-- account's retention settings (plain columns, also in the schema).
ALTER TABLE "Account" ADD COLUMN "messageRetentionDays" INTEGER;
ALTER TABLE "Account" ADD COLUMN "messageStore" TEXT;

-- Each searchable message (not deleted, with a text or caption) has a row here, whose integer id is the
-- rowid of its FTS5 row. Message has no INTEGER PRIMARY KEY, so its own rowid could be renumbered by a
-- VACUUM; this table's ids cannot. The text indexed is the latest: the edit when there is one.
CREATE TABLE "MessageSearchKey" ("id" INTEGER NOT NULL PRIMARY KEY, "messageId" TEXT NOT NULL);
CREATE UNIQUE INDEX "MessageSearchKey_messageId_key" ON "MessageSearchKey"("messageId");
-- Words are runs of letters, digits and marks in any script (the search splits its input the same way);
-- case is folded, accents are kept (as PostgreSQL's 'simple' configuration does). Prefix indexes of 2
-- and 3 characters answer short prefixes without walking every term.
CREATE VIRTUAL TABLE "MessageSearch" USING fts5("body", tokenize = 'unicode61 remove_diacritics 0 categories ''L* N* Co M*''', prefix = '2 3');
INSERT INTO "MessageSearchKey"("messageId") SELECT "id" FROM "Message" WHERE "deletedAt" IS NULL AND COALESCE("editedText", "text") IS NOT NULL;
INSERT INTO "MessageSearch"(rowid, "body") SELECT k."id", COALESCE(m."editedText", m."text") FROM "MessageSearchKey" k JOIN "Message" m ON m."id" = k."messageId";
CREATE TRIGGER "Message_search_insert" AFTER INSERT ON "Message" WHEN new."deletedAt" IS NULL AND COALESCE(new."editedText", new."text") IS NOT NULL BEGIN
  INSERT INTO "MessageSearchKey"("messageId") VALUES (new."id");
  INSERT INTO "MessageSearch"(rowid, "body") VALUES (last_insert_rowid(), COALESCE(new."editedText", new."text"));
END;
CREATE TRIGGER "Message_search_delete" AFTER DELETE ON "Message" BEGIN
  DELETE FROM "MessageSearch" WHERE rowid = (SELECT "id" FROM "MessageSearchKey" WHERE "messageId" = old."id");
  DELETE FROM "MessageSearchKey" WHERE "messageId" = old."id";
END;
CREATE TRIGGER "Message_search_update" AFTER UPDATE OF "text", "editedText", "deletedAt" ON "Message" BEGIN
  DELETE FROM "MessageSearch" WHERE rowid = (SELECT "id" FROM "MessageSearchKey" WHERE "messageId" = old."id");
  DELETE FROM "MessageSearchKey" WHERE "messageId" = old."id";
  INSERT INTO "MessageSearchKey"("messageId") SELECT new."id" WHERE new."deletedAt" IS NULL AND COALESCE(new."editedText", new."text") IS NOT NULL;
  INSERT INTO "MessageSearch"(rowid, "body") SELECT "id", COALESCE(new."editedText", new."text") FROM "MessageSearchKey" WHERE "messageId" = new."id";
END;

-- The retention job deletes a session's oldest messages first.
CREATE INDEX "Message_sessionId_messageTimestamp_idx" ON "Message"("sessionId", "messageTimestamp");
