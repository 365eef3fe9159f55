-- Hand-written: full-text search over the message store (a GIN index on an expression, which the schema
-- cannot express), and the account's retention settings (plain columns, also in the schema).
ALTER TABLE "Account" ADD COLUMN "messageRetentionDays" INTEGER;
ALTER TABLE "Account" ADD COLUMN "messageStore" TEXT;

-- The latest text (the edit when there is one) of messages not deleted, as words of the 'simple'
-- configuration (any language: lower-cased, no stemming, no stop words). The search's query repeats this
-- expression exactly, so the planner can answer it from the index. Inserts, edits and deletes keep it in
-- step as part of the row.
CREATE INDEX "Message_search_idx" ON "Message" USING gin (to_tsvector('simple'::regconfig, COALESCE("editedText", "text", ''))) WHERE "deletedAt" IS NULL;

-- The retention job deletes a session's oldest messages first.
CREATE INDEX "Message_sessionId_messageTimestamp_idx" ON "Message"("sessionId", "messageTimestamp");
