import { z } from 'zod';
import { ERROR_CODES } from '../resolvers/errors.ts';
import * as bulk from '../resolvers/bulk.ts';
import * as channels from '../resolvers/channels.ts';
import * as contactGroups from '../resolvers/contact-groups.ts';
import * as contacts from '../resolvers/contacts.ts';
import * as groups from '../resolvers/groups.ts';
import * as messages from '../resolvers/messages.ts';
import * as scheduling from '../resolvers/scheduling.ts';
import * as sessions from '../resolvers/sessions.ts';
import * as statuses from '../resolvers/statuses.ts';
import * as webhooks from '../resolvers/webhooks.ts';
import type { Settings } from '../runtime/settings.ts';

/**
 * The OpenAPI 3.1 document of /v1: one entry per route of the Express routers (a contract test holds
 * the two together), request bodies and query parameters from the same zod schemas the resolvers
 * parse with, responses from the schemas below, which describe what the routes answer.
 */

// Responses. Nullable fields are always present (null), as the views build them.
const errorSchema = z
  .object({
    ok: z.literal(false),
    error: z.object({
      // The one list of codes (decisions.md's), so the document cannot miss one.
      code: z.enum([...ERROR_CODES] as [string, ...string[]]),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  })
  .meta({ id: 'Error' });
const status = z.enum(['DISCONNECTED', 'CONNECTING', 'QR_READY', 'CONNECTED', 'PAUSED']);
const dateTime = z.iso.datetime({ offset: true });
const session = z
  .object({
    id: z.string(),
    sessionName: z.string(),
    status,
    qrCode: z.string().nullable().describe('PNG data URL of the current QR code, while QR_READY'),
    phone: z.string().nullable(),
    lastError: z.string().nullable(),
    lastSeen: dateTime.nullable(),
  })
  .meta({ id: 'Session' });
const qrCode = z.object({ sessionId: z.string(), status, qrCode: z.string().nullable(), hasQrCode: z.boolean() }).meta({ id: 'QrCode' });
const account = z.object({ id: z.string(), email: z.string(), apiKey: z.string(), createdAt: dateTime }).meta({ id: 'Account' });
const sent = z.object({ ok: z.literal(true), id: z.string().describe('the outgoing record') }).meta({ id: 'SendAnswer' });
const ok = z.object({ ok: z.literal(true) }).loose();
const contact = z
  .object({
    id: z.string(),
    jid: z.string(),
    lid: z.string().nullable().describe("extension: the person's LID (not a phone number), once the network told it"),
    phone: z.string(),
    name: z.string(),
    email: z.string(),
    tags: z.array(z.string()),
    variables: z.record(z.string(), z.string()),
    isBlocked: z.boolean(),
  })
  .meta({ id: 'Contact' });
const contactPage = z.object({ total: z.number().int(), page: z.number().int(), limit: z.number().int(), items: z.array(contact) });
const contactImport = z.object({
  created: z.number().int(),
  updated: z.number().int(),
  skipped: z.number().int(),
  errors: z.array(z.object({ index: z.number().int(), jid: z.string().optional(), reason: z.string() })),
});
const contactGroup = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    color: z.string(),
    isSmartGroup: z.boolean(),
    contactCount: z.number().int(),
  })
  .meta({ id: 'ContactGroup' });
const messageRecord = z
  .object({
    id: z.string(),
    sessionId: z.string(),
    toNumber: z.string(),
    content: z.string(),
    status: z.enum(['PENDING', 'SENT', 'FAILED']),
    sentAt: dateTime.nullable(),
    createdAt: dateTime,
    waMessageId: z.string().nullable(),
    remoteJid: z.string().nullable(),
    toLid: z.string().nullable().describe("extension: the recipient's LID beside toNumber (1:1 messages), when the network told it"),
    error: z.string().nullable().describe('extension: why a FAILED message failed'),
    deliveredAt: dateTime.nullable().describe('extension: when the recipient (in a group, the first member) acknowledged delivery'),
    readAt: dateTime.nullable().describe('extension: when it was first read'),
    playedAt: dateTime.nullable().describe('extension: when a voice note was first played'),
  })
  .loose()
  .meta({ id: 'MessageRecord' });
const receipt = z
  .object({
    recipient: z.string().describe('the user JID that acknowledged: its phone-number JID when known, else its LID JID'),
    recipientLid: z.string().nullable().describe("extension: the recipient's LID, when the network told it"),
    deliveredAt: dateTime.nullable(),
    readAt: dateTime.nullable(),
    playedAt: dateTime.nullable(),
  })
  .meta({ id: 'Receipt' });
const incomingItem = z
  .object({
    eventId: z.number().int(),
    sessionId: z.string(),
    chatId: z.string(),
    chatLid: z.string().nullable().describe("extension: the chat's LID beside its phone-number JID (1:1 chats), when the network told it"),
    from: z.string().describe('the phone-number JID when known, else the LID JID'),
    fromLid: z.string().nullable().describe("extension: the sender's LID, when the network told it"),
    fromMe: z.boolean(),
    type: z.string(),
    content: z.string(),
    pushName: z.string(),
    messageTimestamp: z.number(),
    receivedAt: dateTime,
    media: z
      .object({
        mimetype: z.string(),
        size: z.number().int().describe('bytes of the decrypted file'),
        fileName: z.string().nullable().describe('as the sender named it; null when it gave none'),
        url: z
          .string()
          .describe(
            'GET it with x-api-key to download the file (for INCOMING_MEDIA_RETENTION_MS after it arrived): path-relative (/v1/...), or absolute when PUBLIC_URL is set',
          ),
      })
      .optional()
      .describe('extension: only on messages that carry a file (image, video, audio, voice note, document, sticker)')
      .meta({ id: 'IncomingMedia' }),
  })
  .meta({ id: 'IncomingMessage' });
const group = z
  .object({
    id: z.string(),
    subject: z.string(),
    desc: z.string(),
    participants: z.array(
      z.object({
        id: z.string().describe('the phone-number JID when the network shows it, else the LID JID'),
        phoneNumber: z.string().nullable().describe('extension: the phone number (digits), null when the member hides it'),
        lid: z.string().nullable().describe("extension: the member's LID, when the network told it"),
        admin: z.enum(['admin', 'superadmin']).optional(),
      }),
    ),
  })
  .loose()
  .meta({ id: 'Group' });
const schedule = z.object({ ok: z.literal(true), scheduledInMs: z.number(), sendAt: dateTime, messageId: z.string(), jobId: z.string() });
const recurring = z.object({
  timerId: z.string(),
  sessionId: z.string(),
  to: z.string(),
  message: z.string(),
  everyMs: z.number(),
  createdAt: dateTime,
});
const webhook = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    sessionId: z.string().nullable(),
    description: z.string().nullable(),
    enabled: z.boolean(),
    disabledReason: z.string().nullable(),
    failingSince: dateTime.nullable(),
    previousSecretValidUntil: dateTime.nullable(),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .meta({ id: 'Webhook' });
const webhookWithSecret = webhook.extend({ secret: z.string().describe('whsec_ and base64; shown only on create and rotate') });
const webhookDelivery = z.object({
  id: z.string(),
  eventId: z.string(),
  type: z.string(),
  status: z.string(),
  attempts: z.number().int(),
  nextAttemptAt: dateTime.nullable(),
  lastStatus: z.number().int().nullable(),
  lastError: z.string().nullable(),
  deliveredAt: dateTime.nullable(),
  createdAt: dateTime,
  attemptLog: z.array(
    z.object({
      statusCode: z.number().int().nullable(),
      latencyMs: z.number(),
      responseExcerpt: z.string().nullable(),
      error: z.string().nullable(),
      at: dateTime,
    }),
  ),
});
/** Answers the spec does not show in full: an object, documented in prose. */
const object = (description: string) => z.object({}).loose().describe(description);

type Method = 'get' | 'post' | 'patch' | 'delete';

export interface RouteDoc {
  method: Method;
  /** the Express path (`:param`) */
  path: string;
  summary: string;
  tag: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  response: z.ZodType;
  /** the success status, 200 unless given */
  status?: number;
  /** a send: honours Idempotency-Key */
  idempotent?: boolean;
  /** answers a file of any type (its Content-Type is the file's), not JSON; `response` is then unused */
  binary?: boolean;
}

const S = '/sessions/:sessionId';
const G = `${S}/groups/:groupId`;

/** Every /v1 route. Schemas that depend on settings are shown with the defaults. */
export const routeDocs = (settings: Pick<Settings, 'RECURRING_MIN_MS'>): RouteDoc[] => {
  const priv = false;
  const min = settings.RECURRING_MIN_MS;
  const send = (path: string, summary: string, tag: string, body: z.ZodType, response: z.ZodType = sent): RouteDoc => ({
    method: 'post',
    path,
    summary,
    tag,
    body,
    response,
    idempotent: true,
  });
  return [
    { method: 'get', path: '/accounts/me', summary: 'The calling account, with the key presented', tag: 'Accounts', response: account },

    { method: 'get', path: '/sessions', summary: 'List sessions', tag: 'Sessions', response: z.array(session) },
    {
      method: 'post',
      path: '/sessions',
      summary: 'Create a session',
      tag: 'Sessions',
      body: sessions.nameSchema,
      response: session,
      status: 201,
    },
    { method: 'get', path: S, summary: 'Get a session', tag: 'Sessions', response: session },
    { method: 'patch', path: S, summary: 'Rename a session', tag: 'Sessions', body: sessions.renameSchema, response: session },
    { method: 'delete', path: S, summary: 'Log out (when linked) and delete a session', tag: 'Sessions', response: ok },
    {
      method: 'get',
      path: `${S}/status`,
      summary: 'Live status; extension: waitFor + waitMs wait until the session has that status',
      tag: 'Sessions',
      query: sessions.statusWaitSchema,
      response: session,
    },
    {
      method: 'patch',
      path: `${S}/status`,
      summary: 'Manual status override',
      tag: 'Sessions',
      body: sessions.statusSchema,
      response: session,
    },
    {
      method: 'get',
      path: `${S}/qrcode`,
      summary: 'The current QR code; extension: waitMs waits until one is shown',
      tag: 'Sessions',
      query: sessions.qrWaitSchema,
      response: qrCode,
    },
    { method: 'post', path: `${S}/connect`, summary: 'Open the link (QR or stored credentials)', tag: 'Sessions', response: session },
    { method: 'post', path: `${S}/disconnect`, summary: 'Close the link, keep credentials', tag: 'Sessions', response: session },
    {
      method: 'post',
      path: `${S}/pairing-code`,
      summary: 'Link with an 8-character code instead of a QR',
      tag: 'Sessions',
      body: sessions.pairingSchema,
      response: z.object({ pairingCode: z.string() }),
    },
    {
      method: 'get',
      path: '/whatsapp/status',
      summary: 'Shortcut: session status by query sessionId',
      tag: 'Sessions',
      query: sessions.statusWaitSchema.extend({ sessionId: z.string() }),
      response: session,
    },
    {
      method: 'post',
      path: '/whatsapp/connect',
      summary: 'Shortcut: connect by body sessionId',
      tag: 'Sessions',
      body: z.object({ sessionId: z.string() }),
      response: session,
    },
    {
      method: 'post',
      path: '/whatsapp/disconnect',
      summary: 'Shortcut: disconnect by body sessionId',
      tag: 'Sessions',
      body: z.object({ sessionId: z.string() }),
      response: session,
    },

    send('/sessions/api/send', 'Shortcut: send a text with sessionId in the body', 'Messages', messages.shortcutSendSchema),
    send('/whatsapp/send', 'Shortcut: send a text with sessionId in the body', 'Messages', messages.shortcutSendSchema),
    send(`${S}/send`, 'Send a text', 'Messages', messages.sendSchema),
    send(`${S}/send-media`, 'Send an image, video, audio or document fetched from a URL', 'Messages', messages.mediaSchema(priv)),
    send(`${S}/send-interactive`, 'Send buttons or a list', 'Messages', messages.interactiveSchema),
    send(`${S}/messages/rich`, 'Send a document, contact card or location', 'Messages', messages.richSchema(priv)),
    send(`${S}/messages/typing`, 'Show typing, then send a text', 'Messages', messages.typingSchema, ok),
    send(`${S}/messages/:messageId/edit`, 'Edit a sent text', 'Messages', messages.editSchema),
    {
      method: 'get',
      path: `${S}/messages`,
      summary: 'Outgoing message records, newest first',
      tag: 'Messages',
      query: messages.historySchema,
      response: z.object({ count: z.number().int(), items: z.array(messageRecord) }),
    },
    { method: 'get', path: `${S}/messages/:messageId`, summary: 'One outgoing message record', tag: 'Messages', response: messageRecord },
    {
      method: 'get',
      path: `${S}/messages/:messageId/receipts`,
      summary: 'Extension: who acknowledged a message (each group member; the recipient of a 1:1 message)',
      tag: 'Messages',
      response: z.object({ messageId: z.string(), count: z.number().int(), items: z.array(receipt) }),
    },
    {
      method: 'get',
      path: `${S}/incoming`,
      summary: 'Incoming messages (long-poll with waitMs)',
      tag: 'Messages',
      query: messages.incomingSchema,
      response: z.object({ count: z.number().int(), consumed: z.boolean(), items: z.array(incomingItem) }),
    },
    {
      method: 'get',
      path: `${S}/incoming/:messageId/media`,
      summary:
        "Download a received file (an incoming item's media.url): streamed decrypted, with its Content-Type, Content-Length and Content-Disposition. 404 when unknown or past the retention window (the message says it expired), 410 MEDIA_GONE when the network's media host no longer has it, 502 NETWORK_ERROR when the media host fails before the file starts; a failure midway cuts the body short of its Content-Length",
      tag: 'Messages',
      response: z.string(),
      binary: true,
    },

    send(`${S}/messages/schedule`, 'Schedule a text', 'Scheduling', scheduling.scheduleSchema, schedule),
    send(
      `${S}/messages/campaign`,
      'Send a template to many contacts, paced',
      'Scheduling',
      scheduling.campaignSchema,
      object('`{ok, campaignId, total, ...}`'),
    ),
    send(`${S}/messages/bulk-send`, 'Alias of campaign', 'Scheduling', scheduling.campaignSchema, object('as campaign')),
    send(
      `${S}/messages/variations`,
      'Send one of several texts',
      'Scheduling',
      scheduling.variationsSchema,
      object('`{ok, id, chosen...}`'),
    ),
    send(
      `${S}/messages/recurring`,
      'Send a text every everyMs',
      'Scheduling',
      scheduling.recurringSchema(min),
      object('`{ok, recurringEveryMs, timerId}`'),
    ),
    {
      method: 'get',
      path: `${S}/messages/recurring`,
      summary: "Extension: the session's recurring timers",
      tag: 'Scheduling',
      response: z.object({ count: z.number().int(), items: z.array(recurring) }),
    },
    {
      method: 'delete',
      path: `${S}/messages/recurring/:timerId`,
      summary: 'Extension: cancel a recurring timer',
      tag: 'Scheduling',
      response: ok,
    },

    send(
      `${S}/bulk/contact-group/:groupId`,
      'Send to every contact of a contact group',
      'Bulk',
      bulk.bulkSchema,
      object('`{ok, total, sent, failed, ...}`'),
    ),
    send(`${S}/bulk/tag/:tag`, 'Send to every contact with a tag', 'Bulk', bulk.bulkSchema, object('`{ok, total, sent, failed, ...}`')),

    {
      method: 'get',
      path: '/contacts',
      summary: 'List and search contacts',
      tag: 'Contacts',
      query: contacts.listSchema,
      response: contactPage,
    },
    {
      method: 'post',
      path: '/contacts',
      summary: 'Create or merge a contact (201 when created, 200 when updated)',
      tag: 'Contacts',
      body: contacts.upsertSchema,
      response: contact,
      status: 201,
    },
    {
      method: 'post',
      path: '/contacts/bulk',
      summary: 'Import up to 500 contacts',
      tag: 'Contacts',
      body: contacts.bulkSchema,
      response: contactImport,
    },
    { method: 'get', path: '/contacts/:jid', summary: 'Get a contact', tag: 'Contacts', response: contact },
    {
      method: 'patch',
      path: '/contacts/:jid',
      summary: 'Update a contact',
      tag: 'Contacts',
      body: contacts.patchSchema,
      response: contact,
    },
    { method: 'delete', path: '/contacts/:jid', summary: 'Delete a contact', tag: 'Contacts', response: ok },
    { method: 'get', path: '/contacts/groups', summary: 'List contact groups', tag: 'Contact groups', response: z.array(contactGroup) },
    {
      method: 'post',
      path: '/contacts/groups',
      summary: 'Create a contact group',
      tag: 'Contact groups',
      body: contactGroups.createSchema,
      response: contactGroup,
      status: 201,
    },
    {
      method: 'post',
      path: '/contacts/groups/:groupId/members',
      summary: 'Add contacts to a group',
      tag: 'Contact groups',
      body: contactGroups.membersSchema,
      response: object('`{ok, added, errors}`'),
    },
    {
      method: 'delete',
      path: '/contacts/groups/:groupId/members/:jid',
      summary: 'Remove a contact from a group',
      tag: 'Contact groups',
      response: ok,
    },

    { method: 'get', path: `${S}/groups`, summary: 'WhatsApp groups the session is in', tag: 'Groups', response: z.array(group) },
    { method: 'get', path: `${S}/groups-count`, summary: 'How many groups', tag: 'Groups', response: object('`{count}`') },
    { method: 'post', path: `${S}/groups`, summary: 'Create a group', tag: 'Groups', body: groups.createSchema, response: group },
    {
      method: 'post',
      path: `${S}/groups/join`,
      summary: 'Join by invite code',
      tag: 'Groups',
      body: groups.joinSchema,
      response: object('`{ok, groupId}`'),
    },
    { method: 'get', path: G, summary: 'Group details', tag: 'Groups', response: group },
    { method: 'get', path: `${G}/members`, summary: 'Group members', tag: 'Groups', response: object('members, by phone-number JID') },
    {
      method: 'patch',
      path: G,
      summary: 'Change subject or description',
      tag: 'Groups',
      body: groups.patchSchema,
      response: object('the change'),
    },
    { method: 'delete', path: G, summary: 'Leave the group', tag: 'Groups', response: ok },
    {
      method: 'post',
      path: `${G}/participants`,
      summary: 'Add, remove, promote or demote participants',
      tag: 'Groups',
      body: groups.actionSchema,
      response: object('`{ok, action, participants}`'),
    },
    {
      method: 'patch',
      path: `${G}/privacy`,
      summary: 'Only admins may send',
      tag: 'Groups',
      body: groups.privacySchema,
      response: object('the setting'),
    },
    {
      method: 'post',
      path: `${G}/promote`,
      summary: 'Make participants admins',
      tag: 'Groups',
      body: groups.promoteSchema,
      response: object('`{ok, action, participants}`'),
    },
    {
      method: 'post',
      path: `${G}/demote`,
      summary: 'Make admins participants',
      tag: 'Groups',
      body: groups.promoteSchema,
      response: object('`{ok, action, participants}`'),
    },
    { method: 'get', path: `${G}/invite-code`, summary: 'The invite code', tag: 'Groups', response: object('`{inviteCode, ...}`') },
    send(`${G}/send`, 'Send a text to the group', 'Groups', groups.textSchema),
    send(`${G}/send-media`, 'Send media to the group', 'Groups', messages.groupMediaSchema(priv)),
    send(`${G}/send-interactive`, 'Send buttons or a list to the group', 'Groups', messages.groupInteractiveSchema),

    send(
      `${S}/status/send`,
      'Publish a status',
      'Statuses',
      statuses.statusPayloadSchema(priv),
      object('`{ok, accepted, messageId, ...}`'),
    ),
    send(`${S}/status/schedule`, 'Publish a status later', 'Statuses', statuses.scheduleSchema(priv), object('`{ok, scheduledInMs}`')),
    send(
      `${S}/status/recurring`,
      'Publish a status every everyMs',
      'Statuses',
      statuses.recurringSchema(min, priv),
      object('`{ok, recurringEveryMs, timerId}`'),
    ),

    {
      method: 'get',
      path: '/webhooks',
      summary: "Extension: the account's webhook endpoints",
      tag: 'Webhooks',
      response: z.array(webhook),
    },
    {
      method: 'post',
      path: '/webhooks',
      summary: 'Extension: add a webhook endpoint (the secret is shown once)',
      tag: 'Webhooks',
      body: webhooks.createSchema(priv),
      response: webhookWithSecret,
      status: 201,
    },
    { method: 'get', path: '/webhooks/:webhookId', summary: 'Extension: one webhook endpoint', tag: 'Webhooks', response: webhook },
    {
      method: 'patch',
      path: '/webhooks/:webhookId',
      summary: 'Extension: change a webhook endpoint',
      tag: 'Webhooks',
      body: webhooks.updateSchema(priv),
      response: webhook,
    },
    { method: 'delete', path: '/webhooks/:webhookId', summary: 'Extension: remove a webhook endpoint', tag: 'Webhooks', response: ok },
    {
      method: 'post',
      path: '/webhooks/:webhookId/rotate-secret',
      summary: 'Extension: a new secret (the old one signs too for 24 h)',
      tag: 'Webhooks',
      response: webhookWithSecret,
    },
    {
      method: 'get',
      path: '/webhooks/:webhookId/deliveries',
      summary: "Extension: an endpoint's deliveries with their attempts",
      tag: 'Webhooks',
      query: webhooks.listSchema,
      response: z.array(webhookDelivery),
    },
    {
      method: 'post',
      path: '/webhooks/:webhookId/replay',
      summary: 'Extension: deliver one event again, or every failed one since a time',
      tag: 'Webhooks',
      body: webhooks.replaySchema,
      response: z.object({ ok: z.literal(true), replayed: z.number().int() }),
    },
    {
      method: 'post',
      path: '/webhooks/:webhookId/test',
      summary: 'Extension: send a test event',
      tag: 'Webhooks',
      response: z.object({ ok: z.literal(true), eventId: z.string() }),
    },
    {
      method: 'get',
      path: `${S}/channels`,
      summary: 'Channels (listing is not supported: an empty list)',
      tag: 'Channels',
      response: object('`{ok, channels, message}`'),
    },
    send(`${S}/channels/:channelJid/send`, 'Post to a channel', 'Channels', channels.sendSchema, object('`{ok, id}`')),
  ];
};

/** `/sessions/:sessionId` to `/sessions/{sessionId}`, and the parameter names. */
const openApiPath = (path: string): { path: string; params: string[] } => {
  const params: string[] = [];
  return {
    path: path.replace(/:(\w+)/g, (_m, name: string) => {
      params.push(name);
      return `{${name}}`;
    }),
    params,
  };
};

type JsonSchema = Record<string, unknown>;

/** Schemas as clients send them (before transforms), with refinements zod cannot express left out. */
const inputSchema = (schema: z.ZodType): JsonSchema =>
  z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;

const outputSchema = (schema: z.ZodType): JsonSchema =>
  z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;

const strip = (schema: JsonSchema): JsonSchema => {
  const { $schema: _drop, ...rest } = schema;
  return rest;
};

/**
 * Named schemas (`.meta({ id })`) come out of zod as local `$defs`; they move to components and every
 * reference points there. zod's long date-time pattern goes too: `format: date-time` says it.
 */
const hoist = (schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema => {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== 'object' || value === null) return value;
    const out: JsonSchema = {};
    for (const [key, item] of Object.entries(value)) {
      if (key === '$defs') {
        for (const [id, def] of Object.entries(item as Record<string, unknown>)) components[id] = walk(def) as JsonSchema;
      } else if (key === '$ref' && typeof item === 'string') out.$ref = item.replace('#/$defs/', '#/components/schemas/');
      else if (key === 'pattern' && (value as JsonSchema).format === 'date-time') continue;
      else out[key] = walk(item);
    }
    return out;
  };
  return walk(strip(schema)) as JsonSchema;
};

export const openApiDocument = (settings: Pick<Settings, 'RECURRING_MIN_MS'>): JsonSchema => {
  const components: Record<string, JsonSchema> = {};
  hoist(outputSchema(errorSchema), components);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routeDocs(settings)) {
    const { path, params } = openApiPath(route.path);
    const query = route.query ? (inputSchema(route.query) as { properties?: Record<string, JsonSchema>; required?: string[] }) : undefined;
    const parameters = [
      ...params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
      ...Object.entries(query?.properties ?? {}).map(([name, schema]) => ({
        name,
        in: 'query',
        required: query?.required?.includes(name) ?? false,
        schema: hoist(schema, components),
      })),
      ...(route.idempotent
        ? [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              schema: { type: 'string' },
              description: 'a retry with the same key returns the first answer and sends nothing twice',
            },
          ]
        : []),
    ];
    const error = { description: 'An error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: `${route.method}${route.path.replace(/[/:{}-]+(\w)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: route.summary,
      tags: [route.tag],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: hoist(inputSchema(route.body), components) } } } }
        : {}),
      responses: {
        [String(route.status ?? 200)]: route.binary
          ? { description: 'The file', content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } }
          : {
              description: 'Success',
              content: { 'application/json': { schema: hoist(outputSchema(route.response), components) } },
            },
        '4XX': error,
        '5XX': error,
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Multi-session WhatsApp messaging API',
      version: '1',
      description:
        "The REST interface of messaging-api-v1.md, with this service's extensions. Every route needs the x-api-key header. Errors: `{ok: false, error: {code, message, details?}}`.",
    },
    servers: [{ url: '/v1' }],
    security: [{ apiKey: [] }],
    tags: [...new Set(routeDocs(settings).map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
      schemas: components,
    },
  };
};
