
-- AlterTable
ALTER TABLE "OutgoingMessage" ADD COLUMN "deletedAt" DATETIME;
