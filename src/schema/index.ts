import './accounts.ts';
import './contacts.ts';
import './contact-groups.ts';
import './sessions.ts';
import './messages.ts';
import './message-actions.ts';
import './polls.ts';
import './scheduling.ts';
import './bulk.ts';
import './groups.ts';
import './statuses.ts';
import './channels.ts';
import './chats.ts';
import './pacing.ts';
import './webhooks.ts';
import './message-search.ts';
import { builder } from './builder.ts';

export const schema = builder.toSchema({ sortSchema: true });
