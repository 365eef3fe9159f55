
-- CreateTable
CREATE TABLE "RecurringTimer" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "everyMs" BIGINT NOT NULL,
    "nextAt" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "cancelledAt" DATETIME,
    CONSTRAINT "RecurringTimer_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "RecurringTimer_sessionId_cancelledAt_idx" ON "RecurringTimer"("sessionId", "cancelledAt");

-- CreateIndex
CREATE INDEX "RecurringTimer_accountId_cancelledAt_idx" ON "RecurringTimer"("accountId", "cancelledAt");
