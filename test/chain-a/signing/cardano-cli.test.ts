import type { ChainADevnet, WalletKeyPair } from '../../../devnet/chain-a/index.ts'
import { cardanoCliRecipe, networkFlag, signedCborFromCli, textEnvelope } from '../../../srv/chains/chain-a/signing/cardano-cli.ts'
import { mergeSignerAnswer } from '../../../srv/chains/chain-a/signing/witnesses.ts'
import { startDevnet } from '../../support/devnet.ts'
import { errorCode, keyHashOf, submitHex, unsignedTransfer, type Unsigned } from './support.ts'
import { signWith } from '../../support/sign.ts'

let devnet: ChainADevnet
let w1: WalletKeyPair
let w2: WalletKeyPair
let unsigned: Unsigned

beforeAll(async () => {
  devnet = await startDevnet()
  w1 = devnet.walletKeys('wallet-1')
  w2 = devnet.walletKeys('wallet-2')
  unsigned = unsignedTransfer(devnet, w1.address, w2.address)
})
afterAll(() => devnet.stop())

describe('the text envelope', () => {
  test('is what cardano-cli writes for an unsigned Conway transaction', () => {
    const recipe = cardanoCliRecipe({ unsignedTxCbor: unsigned.hex, network: 'preprod' })
    expect(recipe.envelope).toEqual({ type: 'Tx ConwayEra', description: 'Ledger Cddl Format', cborHex: unsigned.hex })
    expect(recipe.envelopeJson).toBe(`{\n    "type": "Tx ConwayEra",\n    "description": "Ledger Cddl Format",\n    "cborHex": "${unsigned.hex}"\n}\n`)
  })

  test('names the era it is given', () => {
    expect(textEnvelope(unsigned.hex, 'babbage').type).toBe('Tx BabbageEra')
  })

  test('refuses what is not a transaction', async () => {
    expect(await errorCode(() => textEnvelope('a0'))).toBe('MALFORMED_CBOR')
    expect(await errorCode(() => textEnvelope(unsigned.hex, 'Conway!'))).toBe('INVALID_ERA')
  })
})

describe('the sign command', () => {
  test.each([
    ['mainnet', undefined, '--mainnet'],
    ['preprod', undefined, '--testnet-magic 1'],
    ['preview', undefined, '--testnet-magic 2'],
    ['devnet', 42, '--testnet-magic 42'],
  ])('on %s (magic %s) signs the full transaction file with --tx-file and %s', (network, networkMagic, flag) => {
    const recipe = cardanoCliRecipe({ unsignedTxCbor: unsigned.hex, network, networkMagic })
    expect(recipe.command).toBe(`cardano-cli conway transaction sign --tx-file tx.unsigned --signing-key-file payment.skey ${flag} --out-file tx.signed`)
    expect(recipe.args).toEqual(['conway', 'transaction', 'sign', '--tx-file', 'tx.unsigned', '--signing-key-file', 'payment.skey', ...flag.split(' '), '--out-file', 'tx.signed'])
  })

  test('a network without a known magic needs it', async () => {
    expect(await errorCode(() => networkFlag('devnet'))).toBe('NETWORK_MAGIC_REQUIRED')
    expect(networkFlag('sanchonet', 4)).toEqual(['--testnet-magic', '4'])
  })

  test('takes the era and file names as inputs', () => {
    const recipe = cardanoCliRecipe({ unsignedTxCbor: unsigned.hex, network: 'devnet', networkMagic: 42, era: 'babbage', unsignedFile: 'request.tx', signedFile: 'request.signed' })
    expect(recipe.command).toBe('cardano-cli babbage transaction sign --tx-file request.tx --signing-key-file payment.skey --testnet-magic 42 --out-file request.signed')
    expect(recipe.readBackCommand).toBe('jq -r .cborHex request.signed')
  })

  test('has one signing key file per required signer besides the payer', () => {
    const withSigners = unsignedTransfer(devnet, w1.address, w2.address, undefined, { requiredSigners: [keyHashOf(w2.payment), keyHashOf(w1.payment)] })
    const recipe = cardanoCliRecipe({ unsignedTxCbor: withSigners.hex, network: 'preview', payerKeyHash: keyHashOf(w1.payment) })
    expect(recipe.signingKeys.map(({ file, keyHash }) => ({ file, keyHash }))).toEqual([
      { file: 'payment.skey', keyHash: keyHashOf(w1.payment) },
      { file: 'required-signer-1.skey', keyHash: keyHashOf(w2.payment) },
    ])
    expect(recipe.command).toBe('cardano-cli conway transaction sign --tx-file tx.unsigned --signing-key-file payment.skey --signing-key-file required-signer-1.skey --testnet-magic 2 --out-file tx.signed')
  })

  test('the script writes the envelope, signs, and reads the signed CBOR back', () => {
    const recipe = cardanoCliRecipe({ unsignedTxCbor: unsigned.hex, network: 'preprod' })
    expect(recipe.script).toBe([
      "cat > tx.unsigned <<'EOF'",
      recipe.envelopeJson.trimEnd(),
      'EOF',
      'cardano-cli conway transaction sign --tx-file tx.unsigned --signing-key-file payment.skey --testnet-magic 1 --out-file tx.signed',
      'jq -r .cborHex tx.signed',
      '',
    ].join('\n'))
  })
})

describe('reading the signed file back', () => {
  test('its cborHex, merged with the signing request, is accepted by the devnet', () => {
    const signedFile = JSON.stringify({ type: 'Tx ConwayEra', description: 'Ledger Cddl Format', cborHex: signWith(unsigned.hex, w1.payment) }, null, 4) + '\n'
    const cbor = signedCborFromCli(signedFile)
    const signed = mergeSignerAnswer(unsigned.hex, cbor)
    expect(signed).toMatchObject({ answerKind: 'transaction', vkeyWitnessCount: 1 })
    expect(submitHex(devnet, signed.cborHex)).toBe(unsigned.bodyHash)
  })

  test('accepts the bare cborHex and the older "Witnessed Tx" type', () => {
    const hex = signWith(unsigned.hex, w1.payment)
    expect(signedCborFromCli(`  ${hex.toUpperCase()}\n`)).toBe(hex)
    expect(signedCborFromCli(JSON.stringify({ type: 'Witnessed Tx BabbageEra', description: '', cborHex: hex }))).toBe(hex)
  })

  test('refuses files that are not a signed transaction', async () => {
    expect(await errorCode(() => signedCborFromCli('{"type": "Tx ConwayEra"'))).toBe('MALFORMED_ENVELOPE')
    expect(await errorCode(() => signedCborFromCli(JSON.stringify({ type: 'TxWitness ConwayEra', description: '', cborHex: '8200' })))).toBe('MALFORMED_ENVELOPE')
    expect(await errorCode(() => signedCborFromCli('not hex'))).toBe('MALFORMED_CBOR')
  })
})
