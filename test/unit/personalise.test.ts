import { describe, expect, it } from 'vitest';
import { personaliseFor } from '../../src/resolvers/bulk.ts';

const contact = (variables: Record<string, string>, name = '') => ({
  jid: '15550001111@s.whatsapp.net',
  phone: '15550001111',
  name,
  variables: JSON.stringify(variables),
});

describe('bulk personalisation', () => {
  it('fills {name}, {phone} and any variable key, spaces, accents and punctuation included', () => {
    const c = contact({ 'first name': 'Zoé', prénom: 'Zoé L.', 'ville/code': 'Paris 75', city: 'Lyon' }, 'Zoé Martin');
    expect(personaliseFor('{name} {phone} {first name} {prénom} {ville/code} {city}', c)).toBe(
      'Zoé Martin 15550001111 Zoé Zoé L. Paris 75 Lyon',
    );
  });

  it('uses the number for {name} when there is no name', () => {
    expect(personaliseFor('Hi {name}', contact({}))).toBe('Hi 15550001111');
  });

  it('leaves unknown placeholders, nested braces and Object.prototype names as written', () => {
    const c = contact({ a: 'A' });
    expect(personaliseFor('{unknown key} {{a}} {} {constructor} {__proto__} {toString}', c)).toBe(
      '{unknown key} {A} {} {constructor} {__proto__} {toString}',
    );
  });
});
