
-- CreateTable
CREATE TABLE "EventSink" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "exchange" TEXT,
    "stream" TEXT,
    "subjectPrefix" TEXT,
    "events" TEXT NOT NULL,
    "sessionId" TEXT,
    "description" TEXT,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "lastError" TEXT,
    "lastErrorAt" DATETIME,
    "failingSince" DATETIME,
    "lastPublishedAt" DATETIME,
    "leaseOwner" TEXT,
    "leaseUntil" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "SinkDelivery" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "eventId" TEXT NOT NULL,
    "sinkId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "sessionId" TEXT,
    "type" TEXT NOT NULL,
    "data" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "EventSink_accountId_idx" ON "EventSink"("accountId");

-- CreateIndex
CREATE INDEX "SinkDelivery_sinkId_eventId_idx" ON "SinkDelivery"("sinkId", "eventId");
