
-- CreateTable
CREATE TABLE "ClusterNode" (
    "id" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "lockKey" INTEGER NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ClusterNode_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SessionLease" (
    "sessionId" TEXT NOT NULL,
    "nodeId" TEXT NOT NULL,
    "epoch" INTEGER NOT NULL DEFAULT 1,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SessionLease_pkey" PRIMARY KEY ("sessionId")
);

-- CreateIndex
CREATE INDEX "ClusterNode_expiresAt_idx" ON "ClusterNode"("expiresAt");

-- CreateIndex
CREATE INDEX "SessionLease_nodeId_idx" ON "SessionLease"("nodeId");

-- AddForeignKey
ALTER TABLE "SessionLease" ADD CONSTRAINT "SessionLease_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session"("id") ON DELETE CASCADE ON UPDATE CASCADE;
