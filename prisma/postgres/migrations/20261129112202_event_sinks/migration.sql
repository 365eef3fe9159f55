
-- CreateTable
CREATE TABLE "EventSink" (
    "id" TEXT NOT NULL,
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
    "lastErrorAt" TIMESTAMP(3),
    "failingSince" TIMESTAMP(3),
    "lastPublishedAt" TIMESTAMP(3),
    "leaseOwner" TEXT,
    "leaseUntil" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "EventSink_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SinkDelivery" (
    "id" TEXT NOT NULL,
    "eventId" TEXT NOT NULL,
    "sinkId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "sessionId" TEXT,
    "type" TEXT NOT NULL,
    "data" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SinkDelivery_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "EventSink_accountId_idx" ON "EventSink"("accountId");

-- CreateIndex
CREATE INDEX "SinkDelivery_sinkId_eventId_idx" ON "SinkDelivery"("sinkId", "eventId");
