
-- AlterTable
ALTER TABLE "Session" ADD COLUMN "historyPending" TEXT;
