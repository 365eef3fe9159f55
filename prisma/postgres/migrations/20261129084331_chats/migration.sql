
-- CreateTable
CREATE TABLE "Chat" (
    "sessionId" TEXT NOT NULL,
    "chatId" TEXT NOT NULL,
    "chatLid" TEXT,
    "kind" TEXT NOT NULL,
    "name" TEXT,
    "lastMessageId" TEXT NOT NULL,
    "lastMessageAt" TIMESTAMP(3) NOT NULL,
    "unreadCount" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Chat_pkey" PRIMARY KEY ("sessionId","chatId")
);

-- CreateIndex
CREATE INDEX "Chat_sessionId_lastMessageAt_idx" ON "Chat"("sessionId", "lastMessageAt");

-- AddForeignKey
ALTER TABLE "Chat" ADD CONSTRAINT "Chat_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session"("id") ON DELETE CASCADE ON UPDATE CASCADE;
