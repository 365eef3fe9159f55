
-- AlterTable
ALTER TABLE "OutgoingMessage" ADD COLUMN     "deletedAt" TIMESTAMP(3);
