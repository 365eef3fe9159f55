
-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Session" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "sessionName" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'DISCONNECTED',
    "phone" TEXT,
    "lastError" TEXT,
    "lastSeen" DATETIME,
    "autoConnect" BOOLEAN NOT NULL DEFAULT false,
    "sendReadReceipts" BOOLEAN NOT NULL DEFAULT false,
    "ignoreGroups" BOOLEAN NOT NULL DEFAULT false,
    "ignoreStatuses" BOOLEAN NOT NULL DEFAULT false,
    "ignoreBroadcasts" BOOLEAN NOT NULL DEFAULT false,
    "ignoreChannels" BOOLEAN NOT NULL DEFAULT false,
    "rejectCalls" BOOLEAN NOT NULL DEFAULT false,
    "rejectCallsMessage" TEXT,
    "linkedAt" DATETIME,
    "sendIntervalMs" INTEGER,
    "sendJitterMs" INTEGER,
    "perChatIntervalMs" INTEGER,
    "typingMsPerChar" INTEGER,
    "warmup" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Session_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Session" ("accountId", "autoConnect", "createdAt", "id", "ignoreBroadcasts", "ignoreChannels", "ignoreGroups", "ignoreStatuses", "lastError", "lastSeen", "phone", "rejectCalls", "rejectCallsMessage", "sendReadReceipts", "sessionName", "status", "updatedAt") SELECT "accountId", "autoConnect", "createdAt", "id", "ignoreBroadcasts", "ignoreChannels", "ignoreGroups", "ignoreStatuses", "lastError", "lastSeen", "phone", "rejectCalls", "rejectCallsMessage", "sendReadReceipts", "sessionName", "status", "updatedAt" FROM "Session";
DROP TABLE "Session";
ALTER TABLE "new_Session" RENAME TO "Session";
CREATE INDEX "Session_accountId_idx" ON "Session"("accountId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- Numbers linked before this migration are past their warm-up.
UPDATE "Session" SET "linkedAt" = "createdAt" WHERE "phone" IS NOT NULL;
