#!/bin/sh
echo "the native Prisma schema engine is not used here: run npm run db" >&2
exit 1
