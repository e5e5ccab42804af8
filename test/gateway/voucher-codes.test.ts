import {
  ALPHABET, CODE_LENGTH, checkCharacter, groupCode, hasValidCheck, hashVoucherCode, hintOfCode, newVoucherCode, normaliseCode, parseVoucherCode,
} from '../../srv/key-lanes/voucher-codes.ts'

/**
 * Voucher codes as people read, type and mistype them: 95 random bits in Crockford's base32 with
 * a Luhn mod 32 check character, normalised so case, spacing and confusable letters do not matter.
 */

const FORMAT = /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){4}$/
const normalisedOf = (code: string) => code.replace(/-/g, '')
const samples = Array.from({ length: 200 }, newVoucherCode)

test('a new code: 20 characters of the alphabet in five groups of four, with a valid check character', () => {
  for (const code of samples) {
    expect(code).toMatch(FORMAT)
    expect(hasValidCheck(normalisedOf(code))).toBe(true)
    expect(parseVoucherCode(code)).toEqual({ ok: true, normalised: normalisedOf(code) })
  }
  expect(ALPHABET).toHaveLength(32)
  expect(CODE_LENGTH).toBe(20)
})

test('new codes are random: all distinct, every character of the alphabet used about equally often at every data position', () => {
  const many = Array.from({ length: 6400 }, () => normalisedOf(newVoucherCode()))
  expect(new Set(many).size).toBe(many.length)
  for (let position = 0; position < 19; position++) {
    const counts = new Map<string, number>()
    for (const code of many) counts.set(code[position], (counts.get(code[position]) ?? 0) + 1)
    // 200 expected per character; a fair source stays far inside these bounds (more than 6 standard deviations).
    expect(counts.size).toBe(32)
    for (const count of counts.values()) expect(Math.abs(count - 200)).toBeLessThan(85)
  }
})

test('the check character detects every single-character substitution', () => {
  for (const code of samples.slice(0, 50).map(normalisedOf)) {
    for (let position = 0; position < code.length; position++) {
      for (const other of ALPHABET) {
        if (other === code[position]) continue
        const typo = code.slice(0, position) + other + code.slice(position + 1)
        expect(hasValidCheck(typo)).toBe(false)
      }
    }
  }
})

test('the check character detects every adjacent transposition except 0 and Z, the one pair Luhn mod N cannot tell apart', () => {
  const undetected: string[] = []
  for (const code of samples.map(normalisedOf)) {
    for (let position = 0; position + 1 < code.length; position++) {
      const [a, b] = [code[position], code[position + 1]]
      if (a === b) continue
      const swapped = code.slice(0, position) + b + a + code.slice(position + 2)
      if (hasValidCheck(swapped)) undetected.push([a, b].sort().join(''))
    }
  }
  expect([...new Set(undetected)].every(pair => pair === '0Z')).toBe(true)
  // The exception, shown on a code built to contain it.
  const data = '0Z' + '1'.repeat(17)
  const code = data + checkCharacter(data)
  expect(hasValidCheck('Z0' + code.slice(2))).toBe(true)
  expect(hasValidCheck('0Y' + code.slice(2))).toBe(false)
})

test('every pair of adjacent distinct characters, swapped, is detected except 0 and Z', () => {
  for (const a of ALPHABET) {
    for (const b of ALPHABET) {
      if (a === b) continue
      const data = `${a}${b}${'7'.repeat(17)}`
      const swapped = `${b}${a}${'7'.repeat(17)}` + checkCharacter(data)
      expect([a + b, hasValidCheck(swapped)]).toEqual([a + b, a + b === '0Z' || a + b === 'Z0'])
    }
  }
})

test('normalisation: lower case, spaces, hyphens, underscores and other dashes do not matter; O, I and L read as 0, 1 and 1', () => {
  const code = samples[0]
  const normalised = normalisedOf(code)
  for (const spelling of [code.toLowerCase(), normalised, code.replace(/-/g, ' '), code.replace(/-/g, '_'), ` ${code.replace(/-/g, ' – ')}\n`, code.replace(/-/g, '.')]) {
    expect(parseVoucherCode(spelling)).toEqual({ ok: true, normalised })
  }
  expect(normaliseCode('oOiIlL-0011')).toBe('0011110011')
  const data = '0011' + 'ABCD'.repeat(3) + 'XYZ'
  const withZerosAndOnes = groupCode(data + checkCharacter(data))
  expect(parseVoucherCode(withZerosAndOnes.replace('00', 'Oo').replace('11', 'Il'))).toEqual({ ok: true, normalised: data + checkCharacter(data) })
  // Full-width forms (pasted from some keyboards) are the same characters.
  expect(normaliseCode('ＡＢ１２')).toBe('AB12')
})

test('U is not in the alphabet and is refused, not read as V', () => {
  const normalised = normalisedOf(samples[0])
  const withU = 'U' + normalised.slice(1)
  const answer = parseVoucherCode(withU)
  expect(answer).toEqual({ ok: false, code: 'VOUCHER_MALFORMED', message: expect.stringContaining("'U'") })
})

test('malformed: the message says whether the length, a character or the check character is wrong', () => {
  const normalised = normalisedOf(samples[1])
  const cases: [string, RegExp][] = [
    [normalised.slice(1), /has 20 characters .* this one has 19/],
    [normalised + 'A', /this one has 21/],
    ['', /this one has 0/],
    [normalised.slice(0, 19) + '*', /cannot contain '\*'/],
    [normalised.slice(0, 19) + ALPHABET[(ALPHABET.indexOf(normalised[19]) + 1) % 32], /check character does not match/],
    ['A'.repeat(5000), /this text has 5000/],
  ]
  for (const [text, message] of cases) {
    const answer = parseVoucherCode(text)
    expect(answer).toMatchObject({ ok: false, code: 'VOUCHER_MALFORMED' })
    expect(answer.ok ? '' : answer.message).toMatch(message)
  }
})

test('the stored form: a keyed hash of the normalised code (every spelling the same), and a hint of its first group', () => {
  const normalised = normalisedOf(samples[2])
  const hash = hashVoucherCode(normalised)
  expect(hash).toMatch(/^[0-9a-f]{64}$/)
  expect(hashVoucherCode(normaliseCode(samples[2].toLowerCase()))).toBe(hash)
  expect(hashVoucherCode(normalisedOf(samples[3]))).not.toBe(hash)
  expect(hintOfCode(normalised)).toBe(normalised.slice(0, 4) + '…')
})
