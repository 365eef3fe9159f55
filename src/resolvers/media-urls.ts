import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import type { UrlRules } from '../runtime/ports/media.ts';
import { DomainError } from './errors.ts';

export const httpUrl = z.url({ protocol: /^https?$/, message: 'must be an absolute http(s) URL' });

/** The setting that lets URLs of each kind point at private addresses, named in the refusal. */
export type AllowPrivateSetting = 'MEDIA_ALLOW_PRIVATE' | 'WEBHOOK_ALLOW_PRIVATE';

export const privateUrlMessage = (setting: AllowPrivateSetting): string =>
  `must point to a public address (private, loopback and link-local addresses are refused unless ${setting}=true)`;

/** The one rule for media hosts, used on URL literals here and on resolved addresses when fetching. */
export const isPrivateAddress = (address: string): boolean => ipaddr.process(address).range() !== 'unicast';

/** An IP literal outside public unicast, or a localhost name: known from the text alone, so refused with the body's other faults. */
export const isLiteralPrivateHost = (rawUrl: string): boolean => {
  let host: string;
  try {
    host = new URL(rawUrl).hostname
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '')
      .toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return ipaddr.isValid(host) && isPrivateAddress(host);
};

/**
 * A media URL as the body validation sees it. Only literals are judged here; a name that resolves to a
 * private address is refused when the file is fetched.
 */
export const publicUrlSchema = (setting: AllowPrivateSetting, allowPrivate: boolean) =>
  allowPrivate ? httpUrl : httpUrl.refine((url) => !isLiteralPrivateHost(url), privateUrlMessage(setting));

export const mediaUrlSchema = (allowPrivate: boolean) => publicUrlSchema('MEDIA_ALLOW_PRIVATE', allowPrivate);

/** A schema that depends on MEDIA_ALLOW_PRIVATE, built once for each value. */
export const bySetting = <T>(make: (allowPrivate: boolean) => T): ((allowPrivate: boolean) => T) => {
  const open = make(true);
  const guarded = make(false);
  return (allowPrivate) => (allowPrivate ? open : guarded);
};

/** What the root gives each of the runtime's fetchers (media, webhooks): this rule, and the domain's errors. */
export const urlRulesFor = (setting: AllowPrivateSetting): UrlRules => ({
  isPrivateAddress,
  isLiteralPrivateHost,
  privateMessage: privateUrlMessage(setting),
  refused: (field, message) => new DomainError('VALIDATION_FAILED', message, { details: [{ path: field, message }] }),
  unreachable: (message) => new DomainError('NETWORK_ERROR', message),
  isRuleError: (err) => err instanceof DomainError,
});
