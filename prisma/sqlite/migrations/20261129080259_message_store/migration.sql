
-- CreateTable
CREATE TABLE "Message" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "sessionId" TEXT NOT NULL,
    "waMessageId" TEXT NOT NULL,
    "direction" TEXT NOT NULL,
    "chatId" TEXT NOT NULL,
    "chatLid" TEXT,
    "sender" TEXT NOT NULL,
    "senderLid" TEXT,
    "fromMe" BOOLEAN NOT NULL,
    "kind" TEXT NOT NULL,
    "text" TEXT,
    "quotedId" TEXT,
    "mentions" TEXT NOT NULL DEFAULT '[]',
    "key" TEXT NOT NULL,
    "quotable" TEXT,
    "messageTimestamp" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "editedText" TEXT,
    "editedAt" DATETIME,
    "deletedAt" DATETIME,
    "source" TEXT NOT NULL DEFAULT 'live',
    "outgoingId" TEXT,
    CONSTRAINT "Message_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Message_outgoingId_fkey" FOREIGN KEY ("outgoingId") REFERENCES "OutgoingMessage" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "MessageReaction" (
    "messageId" TEXT NOT NULL,
    "reactorKey" TEXT NOT NULL,
    "reactor" TEXT NOT NULL,
    "reactorLid" TEXT,
    "emoji" TEXT NOT NULL,
    "reactedAt" DATETIME NOT NULL,

    PRIMARY KEY ("messageId", "reactorKey"),
    CONSTRAINT "MessageReaction_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "Message_outgoingId_key" ON "Message"("outgoingId");

-- CreateIndex
CREATE INDEX "Message_sessionId_chatId_messageTimestamp_idx" ON "Message"("sessionId", "chatId", "messageTimestamp");

-- CreateIndex
CREATE UNIQUE INDEX "Message_sessionId_waMessageId_key" ON "Message"("sessionId", "waMessageId");
