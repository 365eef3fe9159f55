
-- CreateTable
CREATE TABLE "Chat" (
    "sessionId" TEXT NOT NULL,
    "chatId" TEXT NOT NULL,
    "chatLid" TEXT,
    "kind" TEXT NOT NULL,
    "name" TEXT,
    "lastMessageId" TEXT NOT NULL,
    "lastMessageAt" DATETIME NOT NULL,
    "unreadCount" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("sessionId", "chatId"),
    CONSTRAINT "Chat_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "Chat_sessionId_lastMessageAt_idx" ON "Chat"("sessionId", "lastMessageAt");
