
-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_IdempotentRequest" (
    "accountId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "route" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "body" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "nodeId" TEXT NOT NULL DEFAULT '',

    PRIMARY KEY ("accountId", "key")
);
INSERT INTO "new_IdempotentRequest" ("accountId", "body", "createdAt", "key", "route", "status") SELECT "accountId", "body", "createdAt", "key", "route", "status" FROM "IdempotentRequest";
DROP TABLE "IdempotentRequest";
ALTER TABLE "new_IdempotentRequest" RENAME TO "IdempotentRequest";
CREATE INDEX "IdempotentRequest_createdAt_idx" ON "IdempotentRequest"("createdAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
