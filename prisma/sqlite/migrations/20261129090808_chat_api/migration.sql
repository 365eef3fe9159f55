
-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Chat" (
    "sessionId" TEXT NOT NULL,
    "chatId" TEXT NOT NULL,
    "chatLid" TEXT,
    "kind" TEXT NOT NULL,
    "name" TEXT,
    "lastMessageId" TEXT NOT NULL,
    "lastMessageAt" DATETIME NOT NULL,
    "unreadCount" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastReadAt" DATETIME,
    "archived" BOOLEAN NOT NULL DEFAULT false,
    "pinned" BOOLEAN NOT NULL DEFAULT false,
    "muted" BOOLEAN NOT NULL DEFAULT false,

    PRIMARY KEY ("sessionId", "chatId"),
    CONSTRAINT "Chat_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Chat" ("chatId", "chatLid", "createdAt", "kind", "lastMessageAt", "lastMessageId", "name", "sessionId", "unreadCount") SELECT "chatId", "chatLid", "createdAt", "kind", "lastMessageAt", "lastMessageId", "name", "sessionId", "unreadCount" FROM "Chat";
DROP TABLE "Chat";
ALTER TABLE "new_Chat" RENAME TO "Chat";
CREATE INDEX "Chat_sessionId_lastMessageAt_idx" ON "Chat"("sessionId", "lastMessageAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
