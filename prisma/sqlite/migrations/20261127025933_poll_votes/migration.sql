
-- CreateTable
CREATE TABLE "PollVote" (
    "messageId" TEXT NOT NULL,
    "voterKey" TEXT NOT NULL,
    "voter" TEXT NOT NULL,
    "voterLid" TEXT,
    "options" TEXT NOT NULL DEFAULT '[]',
    "votedAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL,

    PRIMARY KEY ("messageId", "voterKey"),
    CONSTRAINT "PollVote_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "OutgoingMessage" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
