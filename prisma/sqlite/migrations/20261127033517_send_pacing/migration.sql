
-- AlterTable
ALTER TABLE "Account" ADD COLUMN "perChatIntervalMs" INTEGER;
ALTER TABLE "Account" ADD COLUMN "sendIntervalMs" INTEGER;
ALTER TABLE "Account" ADD COLUMN "sendJitterMs" INTEGER;
ALTER TABLE "Account" ADD COLUMN "typingMsPerChar" INTEGER;
ALTER TABLE "Account" ADD COLUMN "warmup" BOOLEAN;

-- AlterTable
ALTER TABLE "Session" ADD COLUMN "linkedAt" DATETIME;
ALTER TABLE "Session" ADD COLUMN "perChatIntervalMs" INTEGER;
ALTER TABLE "Session" ADD COLUMN "sendIntervalMs" INTEGER;
ALTER TABLE "Session" ADD COLUMN "sendJitterMs" INTEGER;
ALTER TABLE "Session" ADD COLUMN "typingMsPerChar" INTEGER;
ALTER TABLE "Session" ADD COLUMN "warmup" BOOLEAN;

-- Numbers linked before this migration are past their warm-up.
UPDATE "Session" SET "linkedAt" = "createdAt" WHERE "phone" IS NOT NULL;
