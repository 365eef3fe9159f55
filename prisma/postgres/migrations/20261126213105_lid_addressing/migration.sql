
-- AlterTable
ALTER TABLE "Contact" ADD COLUMN     "lid" TEXT;

-- AlterTable
ALTER TABLE "MessageReceipt" ADD COLUMN     "recipientLid" TEXT;

-- AlterTable
ALTER TABLE "OutgoingMessage" ADD COLUMN     "toLid" TEXT;

-- CreateIndex
CREATE INDEX "Contact_accountId_lid_idx" ON "Contact"("accountId", "lid");
