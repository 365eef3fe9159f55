
-- AlterTable
ALTER TABLE "OutgoingMessage" ADD COLUMN "deliveredAt" DATETIME;
ALTER TABLE "OutgoingMessage" ADD COLUMN "playedAt" DATETIME;
ALTER TABLE "OutgoingMessage" ADD COLUMN "readAt" DATETIME;

-- CreateTable
CREATE TABLE "MessageReceipt" (
    "messageId" TEXT NOT NULL,
    "recipient" TEXT NOT NULL,
    "deliveredAt" DATETIME,
    "readAt" DATETIME,
    "playedAt" DATETIME,

    PRIMARY KEY ("messageId", "recipient"),
    CONSTRAINT "MessageReceipt_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "OutgoingMessage" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "OutgoingMessage_sessionId_waMessageId_idx" ON "OutgoingMessage"("sessionId", "waMessageId");
