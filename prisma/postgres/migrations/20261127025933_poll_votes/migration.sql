
-- CreateTable
CREATE TABLE "PollVote" (
    "messageId" TEXT NOT NULL,
    "voterKey" TEXT NOT NULL,
    "voter" TEXT NOT NULL,
    "voterLid" TEXT,
    "options" TEXT NOT NULL DEFAULT '[]',
    "votedAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "PollVote_pkey" PRIMARY KEY ("messageId","voterKey")
);

-- AddForeignKey
ALTER TABLE "PollVote" ADD CONSTRAINT "PollVote_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "OutgoingMessage"("id") ON DELETE CASCADE ON UPDATE CASCADE;
