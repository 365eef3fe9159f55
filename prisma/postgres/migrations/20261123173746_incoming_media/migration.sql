
-- CreateTable
CREATE TABLE "IncomingMedia" (
    "sessionId" TEXT NOT NULL,
    "messageId" TEXT NOT NULL,
    "chatId" TEXT NOT NULL,
    "mediaType" TEXT NOT NULL,
    "mimetype" TEXT NOT NULL,
    "size" BIGINT NOT NULL,
    "fileName" TEXT,
    "mediaKey" TEXT NOT NULL,
    "directPath" TEXT,
    "url" TEXT,
    "fileSha256" TEXT,
    "receivedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "IncomingMedia_pkey" PRIMARY KEY ("sessionId","messageId")
);

-- CreateIndex
CREATE INDEX "IncomingMedia_receivedAt_idx" ON "IncomingMedia"("receivedAt");

-- AddForeignKey
ALTER TABLE "IncomingMedia" ADD CONSTRAINT "IncomingMedia_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session"("id") ON DELETE CASCADE ON UPDATE CASCADE;
