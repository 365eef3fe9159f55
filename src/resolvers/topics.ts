/** A campaign or bulk progress id is only ever seen, and fed, inside the account that uses it. */
export const campaignTopic = (accountId: string, campaignId: string): string => `${accountId}/${campaignId}`;
