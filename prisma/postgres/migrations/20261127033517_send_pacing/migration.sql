
-- AlterTable
ALTER TABLE "Account" ADD COLUMN     "perChatIntervalMs" INTEGER,
ADD COLUMN     "sendIntervalMs" INTEGER,
ADD COLUMN     "sendJitterMs" INTEGER,
ADD COLUMN     "typingMsPerChar" INTEGER,
ADD COLUMN     "warmup" BOOLEAN;

-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "linkedAt" TIMESTAMP(3),
ADD COLUMN     "perChatIntervalMs" INTEGER,
ADD COLUMN     "sendIntervalMs" INTEGER,
ADD COLUMN     "sendJitterMs" INTEGER,
ADD COLUMN     "typingMsPerChar" INTEGER,
ADD COLUMN     "warmup" BOOLEAN;

-- Numbers linked before this migration are past their warm-up.
UPDATE "Session" SET "linkedAt" = "createdAt" WHERE "phone" IS NOT NULL;
