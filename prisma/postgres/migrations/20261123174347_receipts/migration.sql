
-- AlterTable
ALTER TABLE "OutgoingMessage" ADD COLUMN     "deliveredAt" TIMESTAMP(3),
ADD COLUMN     "playedAt" TIMESTAMP(3),
ADD COLUMN     "readAt" TIMESTAMP(3);

-- CreateTable
CREATE TABLE "MessageReceipt" (
    "messageId" TEXT NOT NULL,
    "recipient" TEXT NOT NULL,
    "deliveredAt" TIMESTAMP(3),
    "readAt" TIMESTAMP(3),
    "playedAt" TIMESTAMP(3),

    CONSTRAINT "MessageReceipt_pkey" PRIMARY KEY ("messageId","recipient")
);

-- CreateIndex
CREATE INDEX "OutgoingMessage_sessionId_waMessageId_idx" ON "OutgoingMessage"("sessionId", "waMessageId");

-- AddForeignKey
ALTER TABLE "MessageReceipt" ADD CONSTRAINT "MessageReceipt_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "OutgoingMessage"("id") ON DELETE CASCADE ON UPDATE CASCADE;
