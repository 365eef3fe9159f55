
-- AlterTable
ALTER TABLE "IdempotentRequest" ADD COLUMN     "nodeId" TEXT NOT NULL DEFAULT '';
