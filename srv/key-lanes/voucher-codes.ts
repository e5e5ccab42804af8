import { createHmac, randomBytes } from 'node:crypto'
import { laneConfig } from './config.ts'

/**
 * Voucher codes: 19 random characters of Crockford's base32 (95 bits) and a check character,
 * shown in five groups of four (`7K3M-Q9XA-…`). A code is normalised before it is checked and
 * hashed, so case, spacing, hyphens and the confusable letters O, I and L do not matter; only the
 * keyed hash of the normalised code is stored.
 *
 * The check character is Luhn mod N over the same alphabet (N = 32): it detects every
 * single-character error and every transposition of two adjacent characters except one pair, the
 * first and last characters of the alphabet (`0Z` ↔ `Z0`), which Luhn mod N cannot tell apart.
 */

export const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const N = ALPHABET.length
const DATA_LENGTH = 19
export const CODE_LENGTH = DATA_LENGTH + 1
const GROUP = 4

/** What a reader may have typed for a character of the alphabet. */
const CONFUSABLES: Record<string, string> = { O: '0', I: '1', L: '1' }
/** Spacing and separators people put into a code: whitespace, dashes of every kind, underscores, dots. */
const SEPARATORS = /[\s\p{Pd}_.]/gu
/** Longer input is no code, however it is spaced (it is not normalised at all). */
const MAX_INPUT = 100

type ParsedCode = { ok: true; normalised: string } | { ok: false; code: 'VOUCHER_MALFORMED'; message: string }

/** A new code, grouped for display. */
export function newVoucherCode(): string {
  // 256 is a multiple of 32: each byte modulo 32 is an unbiased character.
  const data = [...randomBytes(DATA_LENGTH)].map(byte => ALPHABET[byte % N]).join('')
  return groupCode(data + checkCharacter(data))
}

/** The code in groups of four joined by '-'. */
export const groupCode = (normalised: string) => normalised.match(new RegExp(`.{1,${GROUP}}`, 'g'))!.join('-')

/** The code as it is checked and hashed: upper case, no separators, confusables replaced. */
export function normaliseCode(text: string): string {
  return text.normalize('NFKC').toUpperCase().replace(SEPARATORS, '').replace(/[OIL]/g, letter => CONFUSABLES[letter])
}

/** Whether the text is a well-formed code (its length, its characters, its check character), and its normalised form. */
export function parseVoucherCode(text: string): ParsedCode {
  if (text.length > MAX_INPUT) return malformed(`A voucher code has ${CODE_LENGTH} characters; this text has ${text.length}`)
  const normalised = normaliseCode(text)
  const foreign = [...normalised].find(character => !ALPHABET.includes(character))
  if (foreign !== undefined) return malformed(`A voucher code has only the digits and the letters A-Z without I, L, O and U; it cannot contain '${foreign}'`)
  if (normalised.length !== CODE_LENGTH) return malformed(`A voucher code has ${CODE_LENGTH} characters (not counting hyphens); this one has ${normalised.length}`)
  if (!hasValidCheck(normalised)) return malformed('The check character does not match: a character of this voucher code is mistyped')
  return { ok: true, normalised }
}

const malformed = (message: string): ParsedCode => ({ ok: false, code: 'VOUCHER_MALFORMED', message })

/** The keyed hash under which a normalised code is stored. */
export const hashVoucherCode = (normalised: string) => createHmac('sha256', laneConfig().voucherPepper).update(normalised).digest('hex')

/** The first group of the code, to tell vouchers apart in lists and ledger notes. */
export const hintOfCode = (normalised: string) => normalised.slice(0, GROUP) + '…'

/** The Luhn mod N check character of the data characters. */
export function checkCharacter(data: string): string {
  return ALPHABET[(N - (luhnSum(data, 2) % N)) % N]
}

/** Whether the last character is the check character of the others. */
export const hasValidCheck = (normalised: string) => luhnSum(normalised, 1) % N === 0

/**
 * Luhn's sum from the right: every second character's value doubled, its base-N digits added.
 * `firstFactor` is the factor of the rightmost character: 2 when computing a check character
 * (which will stand to the right), 1 when validating a code that ends with it.
 */
function luhnSum(characters: string, firstFactor: 1 | 2): number {
  let factor = firstFactor
  let sum = 0
  for (let i = characters.length - 1; i >= 0; i--) {
    const addend = factor * ALPHABET.indexOf(characters[i])
    sum += Math.floor(addend / N) + (addend % N)
    factor = factor === 2 ? 1 : 2
  }
  return sum
}
