
-- AlterTable
ALTER TABLE "OutgoingMessage" ADD COLUMN "sentMessage" TEXT;
