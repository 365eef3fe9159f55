import { graphql } from './generated/index.ts';

// Every operation the dashboard sends, typed by `npm run codegen` from schema.graphql.

export const MeQuery = graphql(`
  query Me {
    me {
      id
      email
    }
  }
`);

export const SessionFields = graphql(`
  fragment SessionFields on Session {
    id
    sessionName
    status
    phone
    qrCode
    lastError
    lastSeen
  }
`);

export const SessionsQuery = graphql(`
  query Sessions {
    sessions(first: 100) {
      totalCount
      edges {
        node {
          ...SessionFields
        }
      }
    }
  }
`);

export const SessionQuery = graphql(`
  query Session($id: ID!) {
    session(id: $id) {
      ...SessionFields
    }
  }
`);

export const SessionUpdates = graphql(`
  subscription SessionUpdates($sessionId: ID!) {
    sessionUpdates(sessionId: $sessionId) {
      ...SessionFields
    }
  }
`);

export const CreateSession = graphql(`
  mutation CreateSession($name: String!) {
    createSession(name: $name) {
      ...SessionFields
    }
  }
`);

export const RenameSession = graphql(`
  mutation RenameSession($id: ID!, $name: String!) {
    renameSession(id: $id, sessionName: $name) {
      ...SessionFields
    }
  }
`);

export const DeleteSession = graphql(`
  mutation DeleteSession($id: ID!) {
    deleteSession(id: $id)
  }
`);

export const ConnectSession = graphql(`
  mutation ConnectSession($id: ID!) {
    connectSession(id: $id) {
      ...SessionFields
    }
  }
`);

export const DisconnectSession = graphql(`
  mutation DisconnectSession($id: ID!) {
    disconnectSession(id: $id) {
      ...SessionFields
    }
  }
`);

export const SetSessionStatus = graphql(`
  mutation SetSessionStatus($id: ID!, $status: SettableSessionStatus!) {
    setSessionStatus(id: $id, status: $status) {
      ...SessionFields
    }
  }
`);

export const RequestPairingCode = graphql(`
  mutation RequestPairingCode($id: ID!, $phoneNumber: String!) {
    requestPairingCode(id: $id, phoneNumber: $phoneNumber)
  }
`);

// A send's answer: whether the pacer queued it, and when it goes then.
export const SendFields = graphql(`
  fragment SendFields on SendResult {
    id
    queued
    sendAt
  }
`);

export const SendText = graphql(`
  mutation SendText($sessionId: ID!, $to: String!, $message: String!, $quotedMessageId: String) {
    sendText(sessionId: $sessionId, to: $to, message: $message, quotedMessageId: $quotedMessageId) {
      ...SendFields
    }
  }
`);

export const ReactToMessage = graphql(`
  mutation ReactToMessage($sessionId: ID!, $messageId: ID!, $emoji: String!) {
    reactToMessage(sessionId: $sessionId, messageId: $messageId, emoji: $emoji) {
      ok
      emoji
      targetWaMessageId
    }
  }
`);

export const DeleteMessage = graphql(`
  mutation DeleteMessage($sessionId: ID!, $id: ID!) {
    deleteMessage(sessionId: $sessionId, id: $id) {
      ok
      id
      deletedAt
    }
  }
`);

export const SendMedia = graphql(`
  mutation SendMedia($sessionId: ID!, $input: MediaInput!) {
    sendMedia(sessionId: $sessionId, input: $input) {
      ...SendFields
    }
  }
`);

export const SendInteractive = graphql(`
  mutation SendInteractive($sessionId: ID!, $input: InteractiveInput!) {
    sendInteractive(sessionId: $sessionId, input: $input) {
      ...SendFields
    }
  }
`);

export const MessagesQuery = graphql(`
  query Messages($sessionId: ID!, $status: MessageStatus, $to: String, $first: Int) {
    session(id: $sessionId) {
      id
      messages(status: $status, to: $to, first: $first) {
        pageInfo {
          hasNextPage
        }
        edges {
          node {
            id
            toNumber
            content
            status
            error
            createdAt
            kind
            sendAt
            deliveredAt
            readAt
            playedAt
            deletedAt
          }
        }
      }
    }
  }
`);

export const PollTallyQuery = graphql(`
  query PollTally($sessionId: ID!, $id: ID!) {
    message(sessionId: $sessionId, id: $id) {
      id
      poll {
        selectableCount
        totalVoters
        options {
          name
          votes
        }
      }
    }
  }
`);

export const SendQueueQuery = graphql(`
  query SendQueue($sessionId: ID!, $first: Int) {
    session(id: $sessionId) {
      id
      health {
        state
        reason
        pausedUntil
        rateAnswers
        queueLength
      }
      queue(first: $first) {
        totalCount
        edges {
          node {
            id
            toNumber
            content
            sendAt
          }
        }
      }
    }
  }
`);

export const CancelQueuedMessage = graphql(`
  mutation CancelQueuedMessage($sessionId: ID!, $messageId: ID!) {
    cancelQueuedMessage(sessionId: $sessionId, messageId: $messageId) {
      id
      status
      error
    }
  }
`);

export const IncomingMessages = graphql(`
  subscription IncomingMessages($sessionId: ID!) {
    incomingMessages(sessionId: $sessionId) {
      eventId
      waMessageId
      from
      pushName
      type
      content
      receivedAt
      media {
        url
        mimetype
        fileName
        size
      }
    }
  }
`);

export const ContactsQuery = graphql(`
  query Contacts($search: String, $tag: String, $first: Int, $after: String) {
    contacts(search: $search, tag: $tag, first: $first, after: $after) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          jid
          name
          phone
          email
          tags
        }
      }
    }
  }
`);

export const ImportContacts = graphql(`
  mutation ImportContacts($contacts: [ContactInput!]!) {
    importContacts(contacts: $contacts) {
      created
      updated
      skipped
      errors {
        index
        jid
        reason
      }
    }
  }
`);

// The groups alone, and one group's members when it is opened: every group with its members in one
// query would cost its page size times theirs (GRAPHQL_MAX_COMPLEXITY refused 100 groups of 50).
export const ContactGroupsQuery = graphql(`
  query ContactGroups {
    contactGroups(first: 100) {
      totalCount
      edges {
        node {
          id
          name
          description
          contactCount
        }
      }
    }
  }
`);

export const ContactGroupMembersQuery = graphql(`
  query ContactGroupMembers($id: ID!) {
    contactGroup(id: $id) {
      id
      members(first: 50) {
        totalCount
        edges {
          node {
            id
            jid
            name
          }
        }
      }
    }
  }
`);

export const UpsertContact = graphql(`
  mutation UpsertContact($input: ContactInput!) {
    upsertContact(input: $input) {
      id
      jid
      name
    }
  }
`);

export const DeleteContactGroup = graphql(`
  mutation DeleteContactGroup($id: ID!) {
    deleteContactGroup(id: $id)
  }
`);

export const CreateContactGroup = graphql(`
  mutation CreateContactGroup($name: String!, $description: String) {
    createContactGroup(name: $name, description: $description) {
      id
    }
  }
`);

export const AddContactGroupMembers = graphql(`
  mutation AddContactGroupMembers($groupId: ID!, $jids: [String!]!) {
    addContactGroupMembers(groupId: $groupId, jids: $jids) {
      added
      errors {
        jid
        reason
      }
    }
  }
`);

export const RemoveContactGroupMember = graphql(`
  mutation RemoveContactGroupMember($groupId: ID!, $jid: String!) {
    removeContactGroupMember(groupId: $groupId, jid: $jid)
  }
`);

export const ScheduleMessage = graphql(`
  mutation ScheduleMessage($sessionId: ID!, $to: String!, $message: String!, $sendAt: DateTime) {
    scheduleMessage(sessionId: $sessionId, to: $to, message: $message, sendAt: $sendAt) {
      messageId
      sendAt
    }
  }
`);

export const RecurringQuery = graphql(`
  query Recurring($sessionId: ID!) {
    recurringMessages(sessionId: $sessionId) {
      timerId
      to
      message
      everyMs
      createdAt
    }
  }
`);

export const StartRecurring = graphql(`
  mutation StartRecurring($sessionId: ID!, $to: String!, $message: String!, $everyMs: Int!) {
    startRecurring(sessionId: $sessionId, to: $to, message: $message, everyMs: $everyMs) {
      timerId
      recurringEveryMs
    }
  }
`);

export const CancelRecurring = graphql(`
  mutation CancelRecurring($sessionId: ID!, $timerId: ID!) {
    cancelRecurring(sessionId: $sessionId, timerId: $timerId)
  }
`);

export const StartCampaign = graphql(`
  mutation StartCampaign($sessionId: ID!, $template: String!, $contacts: [CampaignContactInput!]!, $delayMs: Int) {
    startCampaign(sessionId: $sessionId, template: $template, contacts: $contacts, delayMs: $delayMs) {
      campaignId
      count
    }
  }
`);

export const CampaignProgress = graphql(`
  subscription CampaignProgress($campaignId: ID!) {
    campaignProgress(campaignId: $campaignId) {
      campaignId
      total
      sent
      failed
      remaining
    }
  }
`);

export const WebhooksQuery = graphql(`
  query Webhooks {
    webhooks {
      id
      url
      events
      enabled
      description
      sessionId
      failingSince
      disabledReason
    }
  }
`);

export const CreateWebhook = graphql(`
  mutation CreateWebhook($url: String!, $events: [String!]!, $description: String) {
    createWebhook(url: $url, events: $events, description: $description) {
      secret
      webhook {
        id
      }
    }
  }
`);

export const DeleteWebhook = graphql(`
  mutation DeleteWebhook($id: ID!) {
    deleteWebhook(id: $id)
  }
`);

export const SendTestWebhook = graphql(`
  mutation SendTestWebhook($id: ID!) {
    sendTestWebhook(id: $id)
  }
`);

export const WebhookDeliveriesQuery = graphql(`
  query WebhookDeliveries($id: ID!, $status: WebhookDeliveryStatus, $limit: Int) {
    webhookDeliveries(id: $id, status: $status, limit: $limit) {
      id
      eventId
      type
      status
      attempts
      lastStatus
      lastError
      createdAt
      deliveredAt
    }
  }
`);

export const ReplayWebhook = graphql(`
  mutation ReplayWebhook($id: ID!, $eventId: String, $since: DateTime) {
    replayWebhook(id: $id, eventId: $eventId, since: $since)
  }
`);

export const SinksQuery = graphql(`
  query Sinks {
    sinks {
      id
      kind
      url
      exchange
      stream
      subjectPrefix
      events
      enabled
      status {
        state
        lastError
        failingSince
        pending
        lastPublishedAt
      }
    }
  }
`);

export const CreateSink = graphql(`
  mutation CreateSink($kind: SinkKind!, $url: String!, $exchange: String, $stream: String, $subjectPrefix: String, $events: [String!]!) {
    createSink(kind: $kind, url: $url, exchange: $exchange, stream: $stream, subjectPrefix: $subjectPrefix, events: $events) {
      id
    }
  }
`);

export const UpdateSinkEnabled = graphql(`
  mutation UpdateSinkEnabled($id: ID!, $enabled: Boolean!) {
    updateSink(id: $id, enabled: $enabled) {
      id
      enabled
    }
  }
`);

export const DeleteSink = graphql(`
  mutation DeleteSink($id: ID!) {
    deleteSink(id: $id)
  }
`);

// The inbox (pages/Inbox.tsx): a session's chats, one chat's thread, search, live updates.
export const ChatFields = graphql(`
  fragment ChatFields on Chat {
    id
    kind
    name
    unreadCount
    lastActivity
    lastMessage {
      id
      kind
      text
      editedText
      deletedAt
      fromMe
    }
  }
`);

// Lean: each field of a thread's page weighs 1.5^5 in the cost limit (session → chat → messages → edges →
// node); a quoted message is found among those shown, or read on its own (QuotedMessageQuery).
export const ThreadMessageFields = graphql(`
  fragment ThreadMessageFields on Message {
    id
    waMessageId
    sender
    fromMe
    kind
    text
    editedText
    deletedAt
    timestamp
    quotedId
    media {
      url
      mimetype
      fileName
      size
    }
    reactions {
      reactor
      emoji
    }
    receipts {
      status
      deliveredAt
      readAt
      playedAt
    }
  }
`);

export const QuotedMessageQuery = graphql(`
  query QuotedMessage($sessionId: ID!, $id: String!) {
    storedMessage(sessionId: $sessionId, id: $id) {
      id
      kind
      text
      editedText
      deletedAt
      fromMe
      sender
    }
  }
`);

export const ChatsQuery = graphql(`
  query Chats($sessionId: ID!, $first: Int, $after: String) {
    session(id: $sessionId) {
      id
      chats(first: $first, after: $after) {
        totalCount
        pageInfo {
          hasNextPage
          endCursor
        }
        edges {
          node {
            ...ChatFields
          }
        }
      }
    }
  }
`);

export const ThreadQuery = graphql(`
  query Thread($sessionId: ID!, $chatId: String!, $first: Int, $after: String) {
    session(id: $sessionId) {
      id
      chat(id: $chatId) {
        ...ChatFields
        messages(first: $first, after: $after) {
          pageInfo {
            hasNextPage
            endCursor
          }
          edges {
            node {
              ...ThreadMessageFields
            }
          }
        }
      }
    }
  }
`);

export const ChatUpdates = graphql(`
  subscription ChatUpdates($sessionId: ID!) {
    chatUpdates(sessionId: $sessionId) {
      ...ChatFields
    }
  }
`);

export const ThreadUpdates = graphql(`
  subscription ThreadUpdates($sessionId: ID!, $chatId: String) {
    storedMessageUpdates(sessionId: $sessionId, chatId: $chatId) {
      ...ThreadMessageFields
    }
  }
`);

export const MarkChatRead = graphql(`
  mutation MarkChatRead($sessionId: ID!, $chatId: String!) {
    markChatRead(sessionId: $sessionId, chatId: $chatId) {
      chatId
    }
  }
`);

export const SearchMessagesQuery = graphql(`
  query SearchMessages($sessionId: ID!, $query: String!, $first: Int) {
    session(id: $sessionId) {
      id
      searchMessages(query: $query, first: $first) {
        totalCount
        edges {
          node {
            id
            waMessageId
            chatId
            fromMe
            kind
            text
            timestamp
          }
        }
      }
    }
  }
`);
