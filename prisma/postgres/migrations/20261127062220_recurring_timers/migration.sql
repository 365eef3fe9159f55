
-- CreateTable
CREATE TABLE "RecurringTimer" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "everyMs" BIGINT NOT NULL,
    "nextAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "cancelledAt" TIMESTAMP(3),

    CONSTRAINT "RecurringTimer_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "RecurringTimer_sessionId_cancelledAt_idx" ON "RecurringTimer"("sessionId", "cancelledAt");

-- CreateIndex
CREATE INDEX "RecurringTimer_accountId_cancelledAt_idx" ON "RecurringTimer"("accountId", "cancelledAt");

-- AddForeignKey
ALTER TABLE "RecurringTimer" ADD CONSTRAINT "RecurringTimer_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session"("id") ON DELETE CASCADE ON UPDATE CASCADE;
