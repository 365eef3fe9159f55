-- Each delivery carries its event's type and data (copied here from WebhookEvent, which then goes).

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_WebhookDelivery" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "eventId" TEXT NOT NULL,
    "type" TEXT NOT NULL DEFAULT '',
    "data" TEXT NOT NULL DEFAULT '{}',
    "endpointId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "sessionId" TEXT,
    "status" TEXT NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimedUntil" DATETIME,
    "lastStatus" INTEGER,
    "lastError" TEXT,
    "deliveredAt" DATETIME,
    "successLatencyMs" INTEGER,
    "successExcerpt" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);
INSERT INTO "new_WebhookDelivery" ("accountId", "attempts", "claimedUntil", "createdAt", "deliveredAt", "endpointId", "eventId", "id", "lastError", "lastStatus", "nextAttemptAt", "sessionId", "status", "type", "data") SELECT "accountId", "attempts", "claimedUntil", "createdAt", "deliveredAt", "endpointId", "eventId", "id", "lastError", "lastStatus", "nextAttemptAt", "sessionId", "status",
    COALESCE((SELECT e."type" FROM "WebhookEvent" e WHERE e."id" = "WebhookDelivery"."eventId"), ''),
    COALESCE((SELECT e."data" FROM "WebhookEvent" e WHERE e."id" = "WebhookDelivery"."eventId"), '{}') FROM "WebhookDelivery";
DROP TABLE "WebhookDelivery";
ALTER TABLE "new_WebhookDelivery" RENAME TO "WebhookDelivery";
CREATE INDEX "WebhookDelivery_status_nextAttemptAt_idx" ON "WebhookDelivery"("status", "nextAttemptAt");
CREATE INDEX "WebhookDelivery_endpointId_createdAt_idx" ON "WebhookDelivery"("endpointId", "createdAt");
CREATE INDEX "WebhookDelivery_eventId_idx" ON "WebhookDelivery"("eventId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- DropTable
DROP INDEX "WebhookEvent_accountId_createdAt_idx";
DROP TABLE "WebhookEvent";
