
-- CreateTable
CREATE TABLE "IncomingMedia" (
    "sessionId" TEXT NOT NULL,
    "messageId" TEXT NOT NULL,
    "chatId" TEXT NOT NULL,
    "mediaType" TEXT NOT NULL,
    "mimetype" TEXT NOT NULL,
    "size" BIGINT NOT NULL,
    "fileName" TEXT,
    "mediaKey" TEXT NOT NULL,
    "directPath" TEXT,
    "url" TEXT,
    "fileSha256" TEXT,
    "receivedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("sessionId", "messageId"),
    CONSTRAINT "IncomingMedia_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "IncomingMedia_receivedAt_idx" ON "IncomingMedia"("receivedAt");
