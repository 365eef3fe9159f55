-- Hand-written (Prisma cannot express it for both providers): trigram index for substring search.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX "Contact_searchText_trgm_idx" ON "Contact" USING gin ("searchText" gin_trgm_ops);
