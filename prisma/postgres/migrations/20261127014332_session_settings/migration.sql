
-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "ignoreBroadcasts" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "ignoreChannels" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "ignoreGroups" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "ignoreStatuses" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "rejectCalls" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "rejectCallsMessage" TEXT,
ADD COLUMN     "sendReadReceipts" BOOLEAN NOT NULL DEFAULT false;
