
-- CreateTable
CREATE TABLE "ClusterNode" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "address" TEXT NOT NULL,
    "lockKey" INTEGER NOT NULL,
    "startedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "SessionLease" (
    "sessionId" TEXT NOT NULL PRIMARY KEY,
    "nodeId" TEXT NOT NULL,
    "epoch" INTEGER NOT NULL DEFAULT 1,
    "expiresAt" DATETIME NOT NULL,
    CONSTRAINT "SessionLease_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "ClusterNode_expiresAt_idx" ON "ClusterNode"("expiresAt");

-- CreateIndex
CREATE INDEX "SessionLease_nodeId_idx" ON "SessionLease"("nodeId");
