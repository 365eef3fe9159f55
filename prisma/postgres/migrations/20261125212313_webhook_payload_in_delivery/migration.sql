-- Each delivery carries its event's type and data (copied here from WebhookEvent, which then goes).

-- AlterTable
ALTER TABLE "WebhookDelivery" ADD COLUMN     "data" TEXT NOT NULL DEFAULT '{}',
ADD COLUMN     "successExcerpt" TEXT,
ADD COLUMN     "successLatencyMs" INTEGER,
ADD COLUMN     "type" TEXT NOT NULL DEFAULT '';

UPDATE "WebhookDelivery" d SET "type" = e."type", "data" = e."data" FROM "WebhookEvent" e WHERE e."id" = d."eventId";

-- DropTable
DROP TABLE "WebhookEvent";
