import { randomInt } from 'node:crypto';
import { wordlist } from '@scure/bip39/wordlists/english.js';

/**
 * A policy reference: three random words from the 2,048-word BIP-39 list joined by hyphens
 * (`amber-falcon-river` style, as in the original service): 8.6 billion combinations, drawn with a
 * CSPRNG, so no reference says anything about another. Uniqueness is the database's job.
 */
export function generatePolicyReference(): string {
  return Array.from({ length: 3 }, () => wordlist[randomInt(wordlist.length)]).join('-');
}
