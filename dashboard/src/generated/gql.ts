/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query Me {\n    me {\n      id\n      email\n    }\n  }\n": typeof types.MeDocument,
    "\n  fragment SessionFields on Session {\n    id\n    sessionName\n    status\n    phone\n    qrCode\n    lastError\n    lastSeen\n  }\n": typeof types.SessionFieldsFragmentDoc,
    "\n  query Sessions {\n    sessions(first: 100) {\n      totalCount\n      edges {\n        node {\n          ...SessionFields\n        }\n      }\n    }\n  }\n": typeof types.SessionsDocument,
    "\n  query Session($id: ID!) {\n    session(id: $id) {\n      ...SessionFields\n    }\n  }\n": typeof types.SessionDocument,
    "\n  subscription SessionUpdates($sessionId: ID!) {\n    sessionUpdates(sessionId: $sessionId) {\n      ...SessionFields\n    }\n  }\n": typeof types.SessionUpdatesDocument,
    "\n  mutation CreateSession($name: String!) {\n    createSession(name: $name) {\n      ...SessionFields\n    }\n  }\n": typeof types.CreateSessionDocument,
    "\n  mutation RenameSession($id: ID!, $name: String!) {\n    renameSession(id: $id, sessionName: $name) {\n      ...SessionFields\n    }\n  }\n": typeof types.RenameSessionDocument,
    "\n  mutation DeleteSession($id: ID!) {\n    deleteSession(id: $id)\n  }\n": typeof types.DeleteSessionDocument,
    "\n  mutation ConnectSession($id: ID!) {\n    connectSession(id: $id) {\n      ...SessionFields\n    }\n  }\n": typeof types.ConnectSessionDocument,
    "\n  mutation DisconnectSession($id: ID!) {\n    disconnectSession(id: $id) {\n      ...SessionFields\n    }\n  }\n": typeof types.DisconnectSessionDocument,
    "\n  mutation SetSessionStatus($id: ID!, $status: SettableSessionStatus!) {\n    setSessionStatus(id: $id, status: $status) {\n      ...SessionFields\n    }\n  }\n": typeof types.SetSessionStatusDocument,
    "\n  mutation RequestPairingCode($id: ID!, $phoneNumber: String!) {\n    requestPairingCode(id: $id, phoneNumber: $phoneNumber)\n  }\n": typeof types.RequestPairingCodeDocument,
    "\n  fragment SendFields on SendResult {\n    id\n    queued\n    sendAt\n  }\n": typeof types.SendFieldsFragmentDoc,
    "\n  mutation SendText($sessionId: ID!, $to: String!, $message: String!, $quotedMessageId: String) {\n    sendText(sessionId: $sessionId, to: $to, message: $message, quotedMessageId: $quotedMessageId) {\n      ...SendFields\n    }\n  }\n": typeof types.SendTextDocument,
    "\n  mutation ReactToMessage($sessionId: ID!, $messageId: ID!, $emoji: String!) {\n    reactToMessage(sessionId: $sessionId, messageId: $messageId, emoji: $emoji) {\n      ok\n      emoji\n      targetWaMessageId\n    }\n  }\n": typeof types.ReactToMessageDocument,
    "\n  mutation DeleteMessage($sessionId: ID!, $id: ID!) {\n    deleteMessage(sessionId: $sessionId, id: $id) {\n      ok\n      id\n      deletedAt\n    }\n  }\n": typeof types.DeleteMessageDocument,
    "\n  mutation SendMedia($sessionId: ID!, $input: MediaInput!) {\n    sendMedia(sessionId: $sessionId, input: $input) {\n      ...SendFields\n    }\n  }\n": typeof types.SendMediaDocument,
    "\n  mutation SendInteractive($sessionId: ID!, $input: InteractiveInput!) {\n    sendInteractive(sessionId: $sessionId, input: $input) {\n      ...SendFields\n    }\n  }\n": typeof types.SendInteractiveDocument,
    "\n  query Messages($sessionId: ID!, $status: MessageStatus, $to: String, $first: Int) {\n    session(id: $sessionId) {\n      id\n      messages(status: $status, to: $to, first: $first) {\n        pageInfo {\n          hasNextPage\n        }\n        edges {\n          node {\n            id\n            toNumber\n            content\n            status\n            error\n            createdAt\n            kind\n            sendAt\n            deliveredAt\n            readAt\n            playedAt\n            deletedAt\n          }\n        }\n      }\n    }\n  }\n": typeof types.MessagesDocument,
    "\n  query PollTally($sessionId: ID!, $id: ID!) {\n    message(sessionId: $sessionId, id: $id) {\n      id\n      poll {\n        selectableCount\n        totalVoters\n        options {\n          name\n          votes\n        }\n      }\n    }\n  }\n": typeof types.PollTallyDocument,
    "\n  query SendQueue($sessionId: ID!, $first: Int) {\n    session(id: $sessionId) {\n      id\n      health {\n        state\n        reason\n        pausedUntil\n        rateAnswers\n        queueLength\n      }\n      queue(first: $first) {\n        totalCount\n        edges {\n          node {\n            id\n            toNumber\n            content\n            sendAt\n          }\n        }\n      }\n    }\n  }\n": typeof types.SendQueueDocument,
    "\n  mutation CancelQueuedMessage($sessionId: ID!, $messageId: ID!) {\n    cancelQueuedMessage(sessionId: $sessionId, messageId: $messageId) {\n      id\n      status\n      error\n    }\n  }\n": typeof types.CancelQueuedMessageDocument,
    "\n  subscription IncomingMessages($sessionId: ID!) {\n    incomingMessages(sessionId: $sessionId) {\n      eventId\n      waMessageId\n      from\n      pushName\n      type\n      content\n      receivedAt\n      media {\n        url\n        mimetype\n        fileName\n        size\n      }\n    }\n  }\n": typeof types.IncomingMessagesDocument,
    "\n  query Contacts($search: String, $tag: String, $first: Int, $after: String) {\n    contacts(search: $search, tag: $tag, first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          jid\n          name\n          phone\n          email\n          tags\n        }\n      }\n    }\n  }\n": typeof types.ContactsDocument,
    "\n  mutation ImportContacts($contacts: [ContactInput!]!) {\n    importContacts(contacts: $contacts) {\n      created\n      updated\n      skipped\n      errors {\n        index\n        jid\n        reason\n      }\n    }\n  }\n": typeof types.ImportContactsDocument,
    "\n  query ContactGroups {\n    contactGroups(first: 100) {\n      totalCount\n      edges {\n        node {\n          id\n          name\n          description\n          contactCount\n        }\n      }\n    }\n  }\n": typeof types.ContactGroupsDocument,
    "\n  query ContactGroupMembers($id: ID!) {\n    contactGroup(id: $id) {\n      id\n      members(first: 50) {\n        totalCount\n        edges {\n          node {\n            id\n            jid\n            name\n          }\n        }\n      }\n    }\n  }\n": typeof types.ContactGroupMembersDocument,
    "\n  mutation UpsertContact($input: ContactInput!) {\n    upsertContact(input: $input) {\n      id\n      jid\n      name\n    }\n  }\n": typeof types.UpsertContactDocument,
    "\n  mutation DeleteContactGroup($id: ID!) {\n    deleteContactGroup(id: $id)\n  }\n": typeof types.DeleteContactGroupDocument,
    "\n  mutation CreateContactGroup($name: String!, $description: String) {\n    createContactGroup(name: $name, description: $description) {\n      id\n    }\n  }\n": typeof types.CreateContactGroupDocument,
    "\n  mutation AddContactGroupMembers($groupId: ID!, $jids: [String!]!) {\n    addContactGroupMembers(groupId: $groupId, jids: $jids) {\n      added\n      errors {\n        jid\n        reason\n      }\n    }\n  }\n": typeof types.AddContactGroupMembersDocument,
    "\n  mutation RemoveContactGroupMember($groupId: ID!, $jid: String!) {\n    removeContactGroupMember(groupId: $groupId, jid: $jid)\n  }\n": typeof types.RemoveContactGroupMemberDocument,
    "\n  mutation ScheduleMessage($sessionId: ID!, $to: String!, $message: String!, $sendAt: DateTime) {\n    scheduleMessage(sessionId: $sessionId, to: $to, message: $message, sendAt: $sendAt) {\n      messageId\n      sendAt\n    }\n  }\n": typeof types.ScheduleMessageDocument,
    "\n  query Recurring($sessionId: ID!) {\n    recurringMessages(sessionId: $sessionId) {\n      timerId\n      to\n      message\n      everyMs\n      createdAt\n    }\n  }\n": typeof types.RecurringDocument,
    "\n  mutation StartRecurring($sessionId: ID!, $to: String!, $message: String!, $everyMs: Int!) {\n    startRecurring(sessionId: $sessionId, to: $to, message: $message, everyMs: $everyMs) {\n      timerId\n      recurringEveryMs\n    }\n  }\n": typeof types.StartRecurringDocument,
    "\n  mutation CancelRecurring($sessionId: ID!, $timerId: ID!) {\n    cancelRecurring(sessionId: $sessionId, timerId: $timerId)\n  }\n": typeof types.CancelRecurringDocument,
    "\n  mutation StartCampaign($sessionId: ID!, $template: String!, $contacts: [CampaignContactInput!]!, $delayMs: Int) {\n    startCampaign(sessionId: $sessionId, template: $template, contacts: $contacts, delayMs: $delayMs) {\n      campaignId\n      count\n    }\n  }\n": typeof types.StartCampaignDocument,
    "\n  subscription CampaignProgress($campaignId: ID!) {\n    campaignProgress(campaignId: $campaignId) {\n      campaignId\n      total\n      sent\n      failed\n      remaining\n    }\n  }\n": typeof types.CampaignProgressDocument,
    "\n  query Webhooks {\n    webhooks {\n      id\n      url\n      events\n      enabled\n      description\n      sessionId\n      failingSince\n      disabledReason\n    }\n  }\n": typeof types.WebhooksDocument,
    "\n  mutation CreateWebhook($url: String!, $events: [String!]!, $description: String) {\n    createWebhook(url: $url, events: $events, description: $description) {\n      secret\n      webhook {\n        id\n      }\n    }\n  }\n": typeof types.CreateWebhookDocument,
    "\n  mutation DeleteWebhook($id: ID!) {\n    deleteWebhook(id: $id)\n  }\n": typeof types.DeleteWebhookDocument,
    "\n  mutation SendTestWebhook($id: ID!) {\n    sendTestWebhook(id: $id)\n  }\n": typeof types.SendTestWebhookDocument,
    "\n  query WebhookDeliveries($id: ID!, $status: WebhookDeliveryStatus, $limit: Int) {\n    webhookDeliveries(id: $id, status: $status, limit: $limit) {\n      id\n      eventId\n      type\n      status\n      attempts\n      lastStatus\n      lastError\n      createdAt\n      deliveredAt\n    }\n  }\n": typeof types.WebhookDeliveriesDocument,
    "\n  mutation ReplayWebhook($id: ID!, $eventId: String, $since: DateTime) {\n    replayWebhook(id: $id, eventId: $eventId, since: $since)\n  }\n": typeof types.ReplayWebhookDocument,
    "\n  query Sinks {\n    sinks {\n      id\n      kind\n      url\n      exchange\n      stream\n      subjectPrefix\n      events\n      enabled\n      status {\n        state\n        lastError\n        failingSince\n        pending\n        lastPublishedAt\n      }\n    }\n  }\n": typeof types.SinksDocument,
    "\n  mutation CreateSink($kind: SinkKind!, $url: String!, $exchange: String, $stream: String, $subjectPrefix: String, $events: [String!]!) {\n    createSink(kind: $kind, url: $url, exchange: $exchange, stream: $stream, subjectPrefix: $subjectPrefix, events: $events) {\n      id\n    }\n  }\n": typeof types.CreateSinkDocument,
    "\n  mutation UpdateSinkEnabled($id: ID!, $enabled: Boolean!) {\n    updateSink(id: $id, enabled: $enabled) {\n      id\n      enabled\n    }\n  }\n": typeof types.UpdateSinkEnabledDocument,
    "\n  mutation DeleteSink($id: ID!) {\n    deleteSink(id: $id)\n  }\n": typeof types.DeleteSinkDocument,
    "\n  fragment ChatFields on Chat {\n    id\n    kind\n    name\n    unreadCount\n    lastActivity\n    lastMessage {\n      id\n      kind\n      text\n      editedText\n      deletedAt\n      fromMe\n    }\n  }\n": typeof types.ChatFieldsFragmentDoc,
    "\n  fragment ThreadMessageFields on Message {\n    id\n    waMessageId\n    sender\n    fromMe\n    kind\n    text\n    editedText\n    deletedAt\n    timestamp\n    quotedId\n    media {\n      url\n      mimetype\n      fileName\n      size\n    }\n    reactions {\n      reactor\n      emoji\n    }\n    receipts {\n      status\n      deliveredAt\n      readAt\n      playedAt\n    }\n  }\n": typeof types.ThreadMessageFieldsFragmentDoc,
    "\n  query QuotedMessage($sessionId: ID!, $id: String!) {\n    storedMessage(sessionId: $sessionId, id: $id) {\n      id\n      kind\n      text\n      editedText\n      deletedAt\n      fromMe\n      sender\n    }\n  }\n": typeof types.QuotedMessageDocument,
    "\n  query Chats($sessionId: ID!, $first: Int, $after: String) {\n    session(id: $sessionId) {\n      id\n      chats(first: $first, after: $after) {\n        totalCount\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n        edges {\n          node {\n            ...ChatFields\n          }\n        }\n      }\n    }\n  }\n": typeof types.ChatsDocument,
    "\n  query Thread($sessionId: ID!, $chatId: String!, $first: Int, $after: String) {\n    session(id: $sessionId) {\n      id\n      chat(id: $chatId) {\n        ...ChatFields\n        messages(first: $first, after: $after) {\n          pageInfo {\n            hasNextPage\n            endCursor\n          }\n          edges {\n            node {\n              ...ThreadMessageFields\n            }\n          }\n        }\n      }\n    }\n  }\n": typeof types.ThreadDocument,
    "\n  subscription ChatUpdates($sessionId: ID!) {\n    chatUpdates(sessionId: $sessionId) {\n      ...ChatFields\n    }\n  }\n": typeof types.ChatUpdatesDocument,
    "\n  subscription ThreadUpdates($sessionId: ID!, $chatId: String) {\n    storedMessageUpdates(sessionId: $sessionId, chatId: $chatId) {\n      ...ThreadMessageFields\n    }\n  }\n": typeof types.ThreadUpdatesDocument,
    "\n  mutation MarkChatRead($sessionId: ID!, $chatId: String!) {\n    markChatRead(sessionId: $sessionId, chatId: $chatId) {\n      chatId\n    }\n  }\n": typeof types.MarkChatReadDocument,
    "\n  query SearchMessages($sessionId: ID!, $query: String!, $first: Int) {\n    session(id: $sessionId) {\n      id\n      searchMessages(query: $query, first: $first) {\n        totalCount\n        edges {\n          node {\n            id\n            waMessageId\n            chatId\n            fromMe\n            kind\n            text\n            timestamp\n          }\n        }\n      }\n    }\n  }\n": typeof types.SearchMessagesDocument,
};
const documents: Documents = {
    "\n  query Me {\n    me {\n      id\n      email\n    }\n  }\n": types.MeDocument,
    "\n  fragment SessionFields on Session {\n    id\n    sessionName\n    status\n    phone\n    qrCode\n    lastError\n    lastSeen\n  }\n": types.SessionFieldsFragmentDoc,
    "\n  query Sessions {\n    sessions(first: 100) {\n      totalCount\n      edges {\n        node {\n          ...SessionFields\n        }\n      }\n    }\n  }\n": types.SessionsDocument,
    "\n  query Session($id: ID!) {\n    session(id: $id) {\n      ...SessionFields\n    }\n  }\n": types.SessionDocument,
    "\n  subscription SessionUpdates($sessionId: ID!) {\n    sessionUpdates(sessionId: $sessionId) {\n      ...SessionFields\n    }\n  }\n": types.SessionUpdatesDocument,
    "\n  mutation CreateSession($name: String!) {\n    createSession(name: $name) {\n      ...SessionFields\n    }\n  }\n": types.CreateSessionDocument,
    "\n  mutation RenameSession($id: ID!, $name: String!) {\n    renameSession(id: $id, sessionName: $name) {\n      ...SessionFields\n    }\n  }\n": types.RenameSessionDocument,
    "\n  mutation DeleteSession($id: ID!) {\n    deleteSession(id: $id)\n  }\n": types.DeleteSessionDocument,
    "\n  mutation ConnectSession($id: ID!) {\n    connectSession(id: $id) {\n      ...SessionFields\n    }\n  }\n": types.ConnectSessionDocument,
    "\n  mutation DisconnectSession($id: ID!) {\n    disconnectSession(id: $id) {\n      ...SessionFields\n    }\n  }\n": types.DisconnectSessionDocument,
    "\n  mutation SetSessionStatus($id: ID!, $status: SettableSessionStatus!) {\n    setSessionStatus(id: $id, status: $status) {\n      ...SessionFields\n    }\n  }\n": types.SetSessionStatusDocument,
    "\n  mutation RequestPairingCode($id: ID!, $phoneNumber: String!) {\n    requestPairingCode(id: $id, phoneNumber: $phoneNumber)\n  }\n": types.RequestPairingCodeDocument,
    "\n  fragment SendFields on SendResult {\n    id\n    queued\n    sendAt\n  }\n": types.SendFieldsFragmentDoc,
    "\n  mutation SendText($sessionId: ID!, $to: String!, $message: String!, $quotedMessageId: String) {\n    sendText(sessionId: $sessionId, to: $to, message: $message, quotedMessageId: $quotedMessageId) {\n      ...SendFields\n    }\n  }\n": types.SendTextDocument,
    "\n  mutation ReactToMessage($sessionId: ID!, $messageId: ID!, $emoji: String!) {\n    reactToMessage(sessionId: $sessionId, messageId: $messageId, emoji: $emoji) {\n      ok\n      emoji\n      targetWaMessageId\n    }\n  }\n": types.ReactToMessageDocument,
    "\n  mutation DeleteMessage($sessionId: ID!, $id: ID!) {\n    deleteMessage(sessionId: $sessionId, id: $id) {\n      ok\n      id\n      deletedAt\n    }\n  }\n": types.DeleteMessageDocument,
    "\n  mutation SendMedia($sessionId: ID!, $input: MediaInput!) {\n    sendMedia(sessionId: $sessionId, input: $input) {\n      ...SendFields\n    }\n  }\n": types.SendMediaDocument,
    "\n  mutation SendInteractive($sessionId: ID!, $input: InteractiveInput!) {\n    sendInteractive(sessionId: $sessionId, input: $input) {\n      ...SendFields\n    }\n  }\n": types.SendInteractiveDocument,
    "\n  query Messages($sessionId: ID!, $status: MessageStatus, $to: String, $first: Int) {\n    session(id: $sessionId) {\n      id\n      messages(status: $status, to: $to, first: $first) {\n        pageInfo {\n          hasNextPage\n        }\n        edges {\n          node {\n            id\n            toNumber\n            content\n            status\n            error\n            createdAt\n            kind\n            sendAt\n            deliveredAt\n            readAt\n            playedAt\n            deletedAt\n          }\n        }\n      }\n    }\n  }\n": types.MessagesDocument,
    "\n  query PollTally($sessionId: ID!, $id: ID!) {\n    message(sessionId: $sessionId, id: $id) {\n      id\n      poll {\n        selectableCount\n        totalVoters\n        options {\n          name\n          votes\n        }\n      }\n    }\n  }\n": types.PollTallyDocument,
    "\n  query SendQueue($sessionId: ID!, $first: Int) {\n    session(id: $sessionId) {\n      id\n      health {\n        state\n        reason\n        pausedUntil\n        rateAnswers\n        queueLength\n      }\n      queue(first: $first) {\n        totalCount\n        edges {\n          node {\n            id\n            toNumber\n            content\n            sendAt\n          }\n        }\n      }\n    }\n  }\n": types.SendQueueDocument,
    "\n  mutation CancelQueuedMessage($sessionId: ID!, $messageId: ID!) {\n    cancelQueuedMessage(sessionId: $sessionId, messageId: $messageId) {\n      id\n      status\n      error\n    }\n  }\n": types.CancelQueuedMessageDocument,
    "\n  subscription IncomingMessages($sessionId: ID!) {\n    incomingMessages(sessionId: $sessionId) {\n      eventId\n      waMessageId\n      from\n      pushName\n      type\n      content\n      receivedAt\n      media {\n        url\n        mimetype\n        fileName\n        size\n      }\n    }\n  }\n": types.IncomingMessagesDocument,
    "\n  query Contacts($search: String, $tag: String, $first: Int, $after: String) {\n    contacts(search: $search, tag: $tag, first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          jid\n          name\n          phone\n          email\n          tags\n        }\n      }\n    }\n  }\n": types.ContactsDocument,
    "\n  mutation ImportContacts($contacts: [ContactInput!]!) {\n    importContacts(contacts: $contacts) {\n      created\n      updated\n      skipped\n      errors {\n        index\n        jid\n        reason\n      }\n    }\n  }\n": types.ImportContactsDocument,
    "\n  query ContactGroups {\n    contactGroups(first: 100) {\n      totalCount\n      edges {\n        node {\n          id\n          name\n          description\n          contactCount\n        }\n      }\n    }\n  }\n": types.ContactGroupsDocument,
    "\n  query ContactGroupMembers($id: ID!) {\n    contactGroup(id: $id) {\n      id\n      members(first: 50) {\n        totalCount\n        edges {\n          node {\n            id\n            jid\n            name\n          }\n        }\n      }\n    }\n  }\n": types.ContactGroupMembersDocument,
    "\n  mutation UpsertContact($input: ContactInput!) {\n    upsertContact(input: $input) {\n      id\n      jid\n      name\n    }\n  }\n": types.UpsertContactDocument,
    "\n  mutation DeleteContactGroup($id: ID!) {\n    deleteContactGroup(id: $id)\n  }\n": types.DeleteContactGroupDocument,
    "\n  mutation CreateContactGroup($name: String!, $description: String) {\n    createContactGroup(name: $name, description: $description) {\n      id\n    }\n  }\n": types.CreateContactGroupDocument,
    "\n  mutation AddContactGroupMembers($groupId: ID!, $jids: [String!]!) {\n    addContactGroupMembers(groupId: $groupId, jids: $jids) {\n      added\n      errors {\n        jid\n        reason\n      }\n    }\n  }\n": types.AddContactGroupMembersDocument,
    "\n  mutation RemoveContactGroupMember($groupId: ID!, $jid: String!) {\n    removeContactGroupMember(groupId: $groupId, jid: $jid)\n  }\n": types.RemoveContactGroupMemberDocument,
    "\n  mutation ScheduleMessage($sessionId: ID!, $to: String!, $message: String!, $sendAt: DateTime) {\n    scheduleMessage(sessionId: $sessionId, to: $to, message: $message, sendAt: $sendAt) {\n      messageId\n      sendAt\n    }\n  }\n": types.ScheduleMessageDocument,
    "\n  query Recurring($sessionId: ID!) {\n    recurringMessages(sessionId: $sessionId) {\n      timerId\n      to\n      message\n      everyMs\n      createdAt\n    }\n  }\n": types.RecurringDocument,
    "\n  mutation StartRecurring($sessionId: ID!, $to: String!, $message: String!, $everyMs: Int!) {\n    startRecurring(sessionId: $sessionId, to: $to, message: $message, everyMs: $everyMs) {\n      timerId\n      recurringEveryMs\n    }\n  }\n": types.StartRecurringDocument,
    "\n  mutation CancelRecurring($sessionId: ID!, $timerId: ID!) {\n    cancelRecurring(sessionId: $sessionId, timerId: $timerId)\n  }\n": types.CancelRecurringDocument,
    "\n  mutation StartCampaign($sessionId: ID!, $template: String!, $contacts: [CampaignContactInput!]!, $delayMs: Int) {\n    startCampaign(sessionId: $sessionId, template: $template, contacts: $contacts, delayMs: $delayMs) {\n      campaignId\n      count\n    }\n  }\n": types.StartCampaignDocument,
    "\n  subscription CampaignProgress($campaignId: ID!) {\n    campaignProgress(campaignId: $campaignId) {\n      campaignId\n      total\n      sent\n      failed\n      remaining\n    }\n  }\n": types.CampaignProgressDocument,
    "\n  query Webhooks {\n    webhooks {\n      id\n      url\n      events\n      enabled\n      description\n      sessionId\n      failingSince\n      disabledReason\n    }\n  }\n": types.WebhooksDocument,
    "\n  mutation CreateWebhook($url: String!, $events: [String!]!, $description: String) {\n    createWebhook(url: $url, events: $events, description: $description) {\n      secret\n      webhook {\n        id\n      }\n    }\n  }\n": types.CreateWebhookDocument,
    "\n  mutation DeleteWebhook($id: ID!) {\n    deleteWebhook(id: $id)\n  }\n": types.DeleteWebhookDocument,
    "\n  mutation SendTestWebhook($id: ID!) {\n    sendTestWebhook(id: $id)\n  }\n": types.SendTestWebhookDocument,
    "\n  query WebhookDeliveries($id: ID!, $status: WebhookDeliveryStatus, $limit: Int) {\n    webhookDeliveries(id: $id, status: $status, limit: $limit) {\n      id\n      eventId\n      type\n      status\n      attempts\n      lastStatus\n      lastError\n      createdAt\n      deliveredAt\n    }\n  }\n": types.WebhookDeliveriesDocument,
    "\n  mutation ReplayWebhook($id: ID!, $eventId: String, $since: DateTime) {\n    replayWebhook(id: $id, eventId: $eventId, since: $since)\n  }\n": types.ReplayWebhookDocument,
    "\n  query Sinks {\n    sinks {\n      id\n      kind\n      url\n      exchange\n      stream\n      subjectPrefix\n      events\n      enabled\n      status {\n        state\n        lastError\n        failingSince\n        pending\n        lastPublishedAt\n      }\n    }\n  }\n": types.SinksDocument,
    "\n  mutation CreateSink($kind: SinkKind!, $url: String!, $exchange: String, $stream: String, $subjectPrefix: String, $events: [String!]!) {\n    createSink(kind: $kind, url: $url, exchange: $exchange, stream: $stream, subjectPrefix: $subjectPrefix, events: $events) {\n      id\n    }\n  }\n": types.CreateSinkDocument,
    "\n  mutation UpdateSinkEnabled($id: ID!, $enabled: Boolean!) {\n    updateSink(id: $id, enabled: $enabled) {\n      id\n      enabled\n    }\n  }\n": types.UpdateSinkEnabledDocument,
    "\n  mutation DeleteSink($id: ID!) {\n    deleteSink(id: $id)\n  }\n": types.DeleteSinkDocument,
    "\n  fragment ChatFields on Chat {\n    id\n    kind\n    name\n    unreadCount\n    lastActivity\n    lastMessage {\n      id\n      kind\n      text\n      editedText\n      deletedAt\n      fromMe\n    }\n  }\n": types.ChatFieldsFragmentDoc,
    "\n  fragment ThreadMessageFields on Message {\n    id\n    waMessageId\n    sender\n    fromMe\n    kind\n    text\n    editedText\n    deletedAt\n    timestamp\n    quotedId\n    media {\n      url\n      mimetype\n      fileName\n      size\n    }\n    reactions {\n      reactor\n      emoji\n    }\n    receipts {\n      status\n      deliveredAt\n      readAt\n      playedAt\n    }\n  }\n": types.ThreadMessageFieldsFragmentDoc,
    "\n  query QuotedMessage($sessionId: ID!, $id: String!) {\n    storedMessage(sessionId: $sessionId, id: $id) {\n      id\n      kind\n      text\n      editedText\n      deletedAt\n      fromMe\n      sender\n    }\n  }\n": types.QuotedMessageDocument,
    "\n  query Chats($sessionId: ID!, $first: Int, $after: String) {\n    session(id: $sessionId) {\n      id\n      chats(first: $first, after: $after) {\n        totalCount\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n        edges {\n          node {\n            ...ChatFields\n          }\n        }\n      }\n    }\n  }\n": types.ChatsDocument,
    "\n  query Thread($sessionId: ID!, $chatId: String!, $first: Int, $after: String) {\n    session(id: $sessionId) {\n      id\n      chat(id: $chatId) {\n        ...ChatFields\n        messages(first: $first, after: $after) {\n          pageInfo {\n            hasNextPage\n            endCursor\n          }\n          edges {\n            node {\n              ...ThreadMessageFields\n            }\n          }\n        }\n      }\n    }\n  }\n": types.ThreadDocument,
    "\n  subscription ChatUpdates($sessionId: ID!) {\n    chatUpdates(sessionId: $sessionId) {\n      ...ChatFields\n    }\n  }\n": types.ChatUpdatesDocument,
    "\n  subscription ThreadUpdates($sessionId: ID!, $chatId: String) {\n    storedMessageUpdates(sessionId: $sessionId, chatId: $chatId) {\n      ...ThreadMessageFields\n    }\n  }\n": types.ThreadUpdatesDocument,
    "\n  mutation MarkChatRead($sessionId: ID!, $chatId: String!) {\n    markChatRead(sessionId: $sessionId, chatId: $chatId) {\n      chatId\n    }\n  }\n": types.MarkChatReadDocument,
    "\n  query SearchMessages($sessionId: ID!, $query: String!, $first: Int) {\n    session(id: $sessionId) {\n      id\n      searchMessages(query: $query, first: $first) {\n        totalCount\n        edges {\n          node {\n            id\n            waMessageId\n            chatId\n            fromMe\n            kind\n            text\n            timestamp\n          }\n        }\n      }\n    }\n  }\n": types.SearchMessagesDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Me {\n    me {\n      id\n      email\n    }\n  }\n"): (typeof documents)["\n  query Me {\n    me {\n      id\n      email\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment SessionFields on Session {\n    id\n    sessionName\n    status\n    phone\n    qrCode\n    lastError\n    lastSeen\n  }\n"): (typeof documents)["\n  fragment SessionFields on Session {\n    id\n    sessionName\n    status\n    phone\n    qrCode\n    lastError\n    lastSeen\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Sessions {\n    sessions(first: 100) {\n      totalCount\n      edges {\n        node {\n          ...SessionFields\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Sessions {\n    sessions(first: 100) {\n      totalCount\n      edges {\n        node {\n          ...SessionFields\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Session($id: ID!) {\n    session(id: $id) {\n      ...SessionFields\n    }\n  }\n"): (typeof documents)["\n  query Session($id: ID!) {\n    session(id: $id) {\n      ...SessionFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription SessionUpdates($sessionId: ID!) {\n    sessionUpdates(sessionId: $sessionId) {\n      ...SessionFields\n    }\n  }\n"): (typeof documents)["\n  subscription SessionUpdates($sessionId: ID!) {\n    sessionUpdates(sessionId: $sessionId) {\n      ...SessionFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateSession($name: String!) {\n    createSession(name: $name) {\n      ...SessionFields\n    }\n  }\n"): (typeof documents)["\n  mutation CreateSession($name: String!) {\n    createSession(name: $name) {\n      ...SessionFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RenameSession($id: ID!, $name: String!) {\n    renameSession(id: $id, sessionName: $name) {\n      ...SessionFields\n    }\n  }\n"): (typeof documents)["\n  mutation RenameSession($id: ID!, $name: String!) {\n    renameSession(id: $id, sessionName: $name) {\n      ...SessionFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteSession($id: ID!) {\n    deleteSession(id: $id)\n  }\n"): (typeof documents)["\n  mutation DeleteSession($id: ID!) {\n    deleteSession(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConnectSession($id: ID!) {\n    connectSession(id: $id) {\n      ...SessionFields\n    }\n  }\n"): (typeof documents)["\n  mutation ConnectSession($id: ID!) {\n    connectSession(id: $id) {\n      ...SessionFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DisconnectSession($id: ID!) {\n    disconnectSession(id: $id) {\n      ...SessionFields\n    }\n  }\n"): (typeof documents)["\n  mutation DisconnectSession($id: ID!) {\n    disconnectSession(id: $id) {\n      ...SessionFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetSessionStatus($id: ID!, $status: SettableSessionStatus!) {\n    setSessionStatus(id: $id, status: $status) {\n      ...SessionFields\n    }\n  }\n"): (typeof documents)["\n  mutation SetSessionStatus($id: ID!, $status: SettableSessionStatus!) {\n    setSessionStatus(id: $id, status: $status) {\n      ...SessionFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RequestPairingCode($id: ID!, $phoneNumber: String!) {\n    requestPairingCode(id: $id, phoneNumber: $phoneNumber)\n  }\n"): (typeof documents)["\n  mutation RequestPairingCode($id: ID!, $phoneNumber: String!) {\n    requestPairingCode(id: $id, phoneNumber: $phoneNumber)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment SendFields on SendResult {\n    id\n    queued\n    sendAt\n  }\n"): (typeof documents)["\n  fragment SendFields on SendResult {\n    id\n    queued\n    sendAt\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SendText($sessionId: ID!, $to: String!, $message: String!, $quotedMessageId: String) {\n    sendText(sessionId: $sessionId, to: $to, message: $message, quotedMessageId: $quotedMessageId) {\n      ...SendFields\n    }\n  }\n"): (typeof documents)["\n  mutation SendText($sessionId: ID!, $to: String!, $message: String!, $quotedMessageId: String) {\n    sendText(sessionId: $sessionId, to: $to, message: $message, quotedMessageId: $quotedMessageId) {\n      ...SendFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ReactToMessage($sessionId: ID!, $messageId: ID!, $emoji: String!) {\n    reactToMessage(sessionId: $sessionId, messageId: $messageId, emoji: $emoji) {\n      ok\n      emoji\n      targetWaMessageId\n    }\n  }\n"): (typeof documents)["\n  mutation ReactToMessage($sessionId: ID!, $messageId: ID!, $emoji: String!) {\n    reactToMessage(sessionId: $sessionId, messageId: $messageId, emoji: $emoji) {\n      ok\n      emoji\n      targetWaMessageId\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteMessage($sessionId: ID!, $id: ID!) {\n    deleteMessage(sessionId: $sessionId, id: $id) {\n      ok\n      id\n      deletedAt\n    }\n  }\n"): (typeof documents)["\n  mutation DeleteMessage($sessionId: ID!, $id: ID!) {\n    deleteMessage(sessionId: $sessionId, id: $id) {\n      ok\n      id\n      deletedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SendMedia($sessionId: ID!, $input: MediaInput!) {\n    sendMedia(sessionId: $sessionId, input: $input) {\n      ...SendFields\n    }\n  }\n"): (typeof documents)["\n  mutation SendMedia($sessionId: ID!, $input: MediaInput!) {\n    sendMedia(sessionId: $sessionId, input: $input) {\n      ...SendFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SendInteractive($sessionId: ID!, $input: InteractiveInput!) {\n    sendInteractive(sessionId: $sessionId, input: $input) {\n      ...SendFields\n    }\n  }\n"): (typeof documents)["\n  mutation SendInteractive($sessionId: ID!, $input: InteractiveInput!) {\n    sendInteractive(sessionId: $sessionId, input: $input) {\n      ...SendFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Messages($sessionId: ID!, $status: MessageStatus, $to: String, $first: Int) {\n    session(id: $sessionId) {\n      id\n      messages(status: $status, to: $to, first: $first) {\n        pageInfo {\n          hasNextPage\n        }\n        edges {\n          node {\n            id\n            toNumber\n            content\n            status\n            error\n            createdAt\n            kind\n            sendAt\n            deliveredAt\n            readAt\n            playedAt\n            deletedAt\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Messages($sessionId: ID!, $status: MessageStatus, $to: String, $first: Int) {\n    session(id: $sessionId) {\n      id\n      messages(status: $status, to: $to, first: $first) {\n        pageInfo {\n          hasNextPage\n        }\n        edges {\n          node {\n            id\n            toNumber\n            content\n            status\n            error\n            createdAt\n            kind\n            sendAt\n            deliveredAt\n            readAt\n            playedAt\n            deletedAt\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PollTally($sessionId: ID!, $id: ID!) {\n    message(sessionId: $sessionId, id: $id) {\n      id\n      poll {\n        selectableCount\n        totalVoters\n        options {\n          name\n          votes\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query PollTally($sessionId: ID!, $id: ID!) {\n    message(sessionId: $sessionId, id: $id) {\n      id\n      poll {\n        selectableCount\n        totalVoters\n        options {\n          name\n          votes\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SendQueue($sessionId: ID!, $first: Int) {\n    session(id: $sessionId) {\n      id\n      health {\n        state\n        reason\n        pausedUntil\n        rateAnswers\n        queueLength\n      }\n      queue(first: $first) {\n        totalCount\n        edges {\n          node {\n            id\n            toNumber\n            content\n            sendAt\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query SendQueue($sessionId: ID!, $first: Int) {\n    session(id: $sessionId) {\n      id\n      health {\n        state\n        reason\n        pausedUntil\n        rateAnswers\n        queueLength\n      }\n      queue(first: $first) {\n        totalCount\n        edges {\n          node {\n            id\n            toNumber\n            content\n            sendAt\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CancelQueuedMessage($sessionId: ID!, $messageId: ID!) {\n    cancelQueuedMessage(sessionId: $sessionId, messageId: $messageId) {\n      id\n      status\n      error\n    }\n  }\n"): (typeof documents)["\n  mutation CancelQueuedMessage($sessionId: ID!, $messageId: ID!) {\n    cancelQueuedMessage(sessionId: $sessionId, messageId: $messageId) {\n      id\n      status\n      error\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription IncomingMessages($sessionId: ID!) {\n    incomingMessages(sessionId: $sessionId) {\n      eventId\n      waMessageId\n      from\n      pushName\n      type\n      content\n      receivedAt\n      media {\n        url\n        mimetype\n        fileName\n        size\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription IncomingMessages($sessionId: ID!) {\n    incomingMessages(sessionId: $sessionId) {\n      eventId\n      waMessageId\n      from\n      pushName\n      type\n      content\n      receivedAt\n      media {\n        url\n        mimetype\n        fileName\n        size\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Contacts($search: String, $tag: String, $first: Int, $after: String) {\n    contacts(search: $search, tag: $tag, first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          jid\n          name\n          phone\n          email\n          tags\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Contacts($search: String, $tag: String, $first: Int, $after: String) {\n    contacts(search: $search, tag: $tag, first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          jid\n          name\n          phone\n          email\n          tags\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ImportContacts($contacts: [ContactInput!]!) {\n    importContacts(contacts: $contacts) {\n      created\n      updated\n      skipped\n      errors {\n        index\n        jid\n        reason\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation ImportContacts($contacts: [ContactInput!]!) {\n    importContacts(contacts: $contacts) {\n      created\n      updated\n      skipped\n      errors {\n        index\n        jid\n        reason\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ContactGroups {\n    contactGroups(first: 100) {\n      totalCount\n      edges {\n        node {\n          id\n          name\n          description\n          contactCount\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ContactGroups {\n    contactGroups(first: 100) {\n      totalCount\n      edges {\n        node {\n          id\n          name\n          description\n          contactCount\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ContactGroupMembers($id: ID!) {\n    contactGroup(id: $id) {\n      id\n      members(first: 50) {\n        totalCount\n        edges {\n          node {\n            id\n            jid\n            name\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ContactGroupMembers($id: ID!) {\n    contactGroup(id: $id) {\n      id\n      members(first: 50) {\n        totalCount\n        edges {\n          node {\n            id\n            jid\n            name\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpsertContact($input: ContactInput!) {\n    upsertContact(input: $input) {\n      id\n      jid\n      name\n    }\n  }\n"): (typeof documents)["\n  mutation UpsertContact($input: ContactInput!) {\n    upsertContact(input: $input) {\n      id\n      jid\n      name\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteContactGroup($id: ID!) {\n    deleteContactGroup(id: $id)\n  }\n"): (typeof documents)["\n  mutation DeleteContactGroup($id: ID!) {\n    deleteContactGroup(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateContactGroup($name: String!, $description: String) {\n    createContactGroup(name: $name, description: $description) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation CreateContactGroup($name: String!, $description: String) {\n    createContactGroup(name: $name, description: $description) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AddContactGroupMembers($groupId: ID!, $jids: [String!]!) {\n    addContactGroupMembers(groupId: $groupId, jids: $jids) {\n      added\n      errors {\n        jid\n        reason\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation AddContactGroupMembers($groupId: ID!, $jids: [String!]!) {\n    addContactGroupMembers(groupId: $groupId, jids: $jids) {\n      added\n      errors {\n        jid\n        reason\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RemoveContactGroupMember($groupId: ID!, $jid: String!) {\n    removeContactGroupMember(groupId: $groupId, jid: $jid)\n  }\n"): (typeof documents)["\n  mutation RemoveContactGroupMember($groupId: ID!, $jid: String!) {\n    removeContactGroupMember(groupId: $groupId, jid: $jid)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ScheduleMessage($sessionId: ID!, $to: String!, $message: String!, $sendAt: DateTime) {\n    scheduleMessage(sessionId: $sessionId, to: $to, message: $message, sendAt: $sendAt) {\n      messageId\n      sendAt\n    }\n  }\n"): (typeof documents)["\n  mutation ScheduleMessage($sessionId: ID!, $to: String!, $message: String!, $sendAt: DateTime) {\n    scheduleMessage(sessionId: $sessionId, to: $to, message: $message, sendAt: $sendAt) {\n      messageId\n      sendAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Recurring($sessionId: ID!) {\n    recurringMessages(sessionId: $sessionId) {\n      timerId\n      to\n      message\n      everyMs\n      createdAt\n    }\n  }\n"): (typeof documents)["\n  query Recurring($sessionId: ID!) {\n    recurringMessages(sessionId: $sessionId) {\n      timerId\n      to\n      message\n      everyMs\n      createdAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation StartRecurring($sessionId: ID!, $to: String!, $message: String!, $everyMs: Int!) {\n    startRecurring(sessionId: $sessionId, to: $to, message: $message, everyMs: $everyMs) {\n      timerId\n      recurringEveryMs\n    }\n  }\n"): (typeof documents)["\n  mutation StartRecurring($sessionId: ID!, $to: String!, $message: String!, $everyMs: Int!) {\n    startRecurring(sessionId: $sessionId, to: $to, message: $message, everyMs: $everyMs) {\n      timerId\n      recurringEveryMs\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CancelRecurring($sessionId: ID!, $timerId: ID!) {\n    cancelRecurring(sessionId: $sessionId, timerId: $timerId)\n  }\n"): (typeof documents)["\n  mutation CancelRecurring($sessionId: ID!, $timerId: ID!) {\n    cancelRecurring(sessionId: $sessionId, timerId: $timerId)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation StartCampaign($sessionId: ID!, $template: String!, $contacts: [CampaignContactInput!]!, $delayMs: Int) {\n    startCampaign(sessionId: $sessionId, template: $template, contacts: $contacts, delayMs: $delayMs) {\n      campaignId\n      count\n    }\n  }\n"): (typeof documents)["\n  mutation StartCampaign($sessionId: ID!, $template: String!, $contacts: [CampaignContactInput!]!, $delayMs: Int) {\n    startCampaign(sessionId: $sessionId, template: $template, contacts: $contacts, delayMs: $delayMs) {\n      campaignId\n      count\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription CampaignProgress($campaignId: ID!) {\n    campaignProgress(campaignId: $campaignId) {\n      campaignId\n      total\n      sent\n      failed\n      remaining\n    }\n  }\n"): (typeof documents)["\n  subscription CampaignProgress($campaignId: ID!) {\n    campaignProgress(campaignId: $campaignId) {\n      campaignId\n      total\n      sent\n      failed\n      remaining\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Webhooks {\n    webhooks {\n      id\n      url\n      events\n      enabled\n      description\n      sessionId\n      failingSince\n      disabledReason\n    }\n  }\n"): (typeof documents)["\n  query Webhooks {\n    webhooks {\n      id\n      url\n      events\n      enabled\n      description\n      sessionId\n      failingSince\n      disabledReason\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateWebhook($url: String!, $events: [String!]!, $description: String) {\n    createWebhook(url: $url, events: $events, description: $description) {\n      secret\n      webhook {\n        id\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation CreateWebhook($url: String!, $events: [String!]!, $description: String) {\n    createWebhook(url: $url, events: $events, description: $description) {\n      secret\n      webhook {\n        id\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteWebhook($id: ID!) {\n    deleteWebhook(id: $id)\n  }\n"): (typeof documents)["\n  mutation DeleteWebhook($id: ID!) {\n    deleteWebhook(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SendTestWebhook($id: ID!) {\n    sendTestWebhook(id: $id)\n  }\n"): (typeof documents)["\n  mutation SendTestWebhook($id: ID!) {\n    sendTestWebhook(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebhookDeliveries($id: ID!, $status: WebhookDeliveryStatus, $limit: Int) {\n    webhookDeliveries(id: $id, status: $status, limit: $limit) {\n      id\n      eventId\n      type\n      status\n      attempts\n      lastStatus\n      lastError\n      createdAt\n      deliveredAt\n    }\n  }\n"): (typeof documents)["\n  query WebhookDeliveries($id: ID!, $status: WebhookDeliveryStatus, $limit: Int) {\n    webhookDeliveries(id: $id, status: $status, limit: $limit) {\n      id\n      eventId\n      type\n      status\n      attempts\n      lastStatus\n      lastError\n      createdAt\n      deliveredAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ReplayWebhook($id: ID!, $eventId: String, $since: DateTime) {\n    replayWebhook(id: $id, eventId: $eventId, since: $since)\n  }\n"): (typeof documents)["\n  mutation ReplayWebhook($id: ID!, $eventId: String, $since: DateTime) {\n    replayWebhook(id: $id, eventId: $eventId, since: $since)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Sinks {\n    sinks {\n      id\n      kind\n      url\n      exchange\n      stream\n      subjectPrefix\n      events\n      enabled\n      status {\n        state\n        lastError\n        failingSince\n        pending\n        lastPublishedAt\n      }\n    }\n  }\n"): (typeof documents)["\n  query Sinks {\n    sinks {\n      id\n      kind\n      url\n      exchange\n      stream\n      subjectPrefix\n      events\n      enabled\n      status {\n        state\n        lastError\n        failingSince\n        pending\n        lastPublishedAt\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateSink($kind: SinkKind!, $url: String!, $exchange: String, $stream: String, $subjectPrefix: String, $events: [String!]!) {\n    createSink(kind: $kind, url: $url, exchange: $exchange, stream: $stream, subjectPrefix: $subjectPrefix, events: $events) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation CreateSink($kind: SinkKind!, $url: String!, $exchange: String, $stream: String, $subjectPrefix: String, $events: [String!]!) {\n    createSink(kind: $kind, url: $url, exchange: $exchange, stream: $stream, subjectPrefix: $subjectPrefix, events: $events) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateSinkEnabled($id: ID!, $enabled: Boolean!) {\n    updateSink(id: $id, enabled: $enabled) {\n      id\n      enabled\n    }\n  }\n"): (typeof documents)["\n  mutation UpdateSinkEnabled($id: ID!, $enabled: Boolean!) {\n    updateSink(id: $id, enabled: $enabled) {\n      id\n      enabled\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteSink($id: ID!) {\n    deleteSink(id: $id)\n  }\n"): (typeof documents)["\n  mutation DeleteSink($id: ID!) {\n    deleteSink(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ChatFields on Chat {\n    id\n    kind\n    name\n    unreadCount\n    lastActivity\n    lastMessage {\n      id\n      kind\n      text\n      editedText\n      deletedAt\n      fromMe\n    }\n  }\n"): (typeof documents)["\n  fragment ChatFields on Chat {\n    id\n    kind\n    name\n    unreadCount\n    lastActivity\n    lastMessage {\n      id\n      kind\n      text\n      editedText\n      deletedAt\n      fromMe\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ThreadMessageFields on Message {\n    id\n    waMessageId\n    sender\n    fromMe\n    kind\n    text\n    editedText\n    deletedAt\n    timestamp\n    quotedId\n    media {\n      url\n      mimetype\n      fileName\n      size\n    }\n    reactions {\n      reactor\n      emoji\n    }\n    receipts {\n      status\n      deliveredAt\n      readAt\n      playedAt\n    }\n  }\n"): (typeof documents)["\n  fragment ThreadMessageFields on Message {\n    id\n    waMessageId\n    sender\n    fromMe\n    kind\n    text\n    editedText\n    deletedAt\n    timestamp\n    quotedId\n    media {\n      url\n      mimetype\n      fileName\n      size\n    }\n    reactions {\n      reactor\n      emoji\n    }\n    receipts {\n      status\n      deliveredAt\n      readAt\n      playedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query QuotedMessage($sessionId: ID!, $id: String!) {\n    storedMessage(sessionId: $sessionId, id: $id) {\n      id\n      kind\n      text\n      editedText\n      deletedAt\n      fromMe\n      sender\n    }\n  }\n"): (typeof documents)["\n  query QuotedMessage($sessionId: ID!, $id: String!) {\n    storedMessage(sessionId: $sessionId, id: $id) {\n      id\n      kind\n      text\n      editedText\n      deletedAt\n      fromMe\n      sender\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Chats($sessionId: ID!, $first: Int, $after: String) {\n    session(id: $sessionId) {\n      id\n      chats(first: $first, after: $after) {\n        totalCount\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n        edges {\n          node {\n            ...ChatFields\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Chats($sessionId: ID!, $first: Int, $after: String) {\n    session(id: $sessionId) {\n      id\n      chats(first: $first, after: $after) {\n        totalCount\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n        edges {\n          node {\n            ...ChatFields\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Thread($sessionId: ID!, $chatId: String!, $first: Int, $after: String) {\n    session(id: $sessionId) {\n      id\n      chat(id: $chatId) {\n        ...ChatFields\n        messages(first: $first, after: $after) {\n          pageInfo {\n            hasNextPage\n            endCursor\n          }\n          edges {\n            node {\n              ...ThreadMessageFields\n            }\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Thread($sessionId: ID!, $chatId: String!, $first: Int, $after: String) {\n    session(id: $sessionId) {\n      id\n      chat(id: $chatId) {\n        ...ChatFields\n        messages(first: $first, after: $after) {\n          pageInfo {\n            hasNextPage\n            endCursor\n          }\n          edges {\n            node {\n              ...ThreadMessageFields\n            }\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ChatUpdates($sessionId: ID!) {\n    chatUpdates(sessionId: $sessionId) {\n      ...ChatFields\n    }\n  }\n"): (typeof documents)["\n  subscription ChatUpdates($sessionId: ID!) {\n    chatUpdates(sessionId: $sessionId) {\n      ...ChatFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ThreadUpdates($sessionId: ID!, $chatId: String) {\n    storedMessageUpdates(sessionId: $sessionId, chatId: $chatId) {\n      ...ThreadMessageFields\n    }\n  }\n"): (typeof documents)["\n  subscription ThreadUpdates($sessionId: ID!, $chatId: String) {\n    storedMessageUpdates(sessionId: $sessionId, chatId: $chatId) {\n      ...ThreadMessageFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation MarkChatRead($sessionId: ID!, $chatId: String!) {\n    markChatRead(sessionId: $sessionId, chatId: $chatId) {\n      chatId\n    }\n  }\n"): (typeof documents)["\n  mutation MarkChatRead($sessionId: ID!, $chatId: String!) {\n    markChatRead(sessionId: $sessionId, chatId: $chatId) {\n      chatId\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SearchMessages($sessionId: ID!, $query: String!, $first: Int) {\n    session(id: $sessionId) {\n      id\n      searchMessages(query: $query, first: $first) {\n        totalCount\n        edges {\n          node {\n            id\n            waMessageId\n            chatId\n            fromMe\n            kind\n            text\n            timestamp\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query SearchMessages($sessionId: ID!, $query: String!, $first: Int) {\n    session(id: $sessionId) {\n      id\n      searchMessages(query: $query, first: $first) {\n        totalCount\n        edges {\n          node {\n            id\n            waMessageId\n            chatId\n            fromMe\n            kind\n            text\n            timestamp\n          }\n        }\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;