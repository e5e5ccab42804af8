import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import {
  addressNetworkId, addressText, compareRefs, decodeAddress, fromCslMint, fromCslValue, listOf, nativeScriptSatisfied, nativeScriptSigners,
  parsePaymentAddress, parseRef, parseRewardAddress, paymentKeyHash, refOf, refOfInput, requiredTimeLocks, sortedRefs, toCslValue,
  transactionBuilderConfig, transactionInput,
} from '../../srv/chains/chain-a/csl.ts'
import { blake2b256Hex } from '../../devnet/chain-a/crypto.ts'
import { PROTOCOL_PARAMETERS } from '../../devnet/chain-a/params.ts'
import { parseAddress, parseStakeAddress } from '../../srv/chains/chain-a/identifiers.ts'
import { languageViews } from '../../srv/chains/chain-a/plutus.ts'

/* The CSL helpers every part of chain A uses: addresses, references, values, native scripts, the
   builder configuration and the Plutus language views. */

const keyHash = (n: number) => CSL.Ed25519KeyHash.from_hex(n.toString(16).padStart(2, '0').repeat(28))
const keyCredential = (n: number) => CSL.Credential.from_keyhash(keyHash(n))
const base = (network: number, n = 1) => CSL.BaseAddress.new(network, keyCredential(n), keyCredential(n + 1)).to_address().to_bech32()
const reward = (network: number) => CSL.RewardAddress.new(network, keyCredential(3)).to_address().to_bech32()
const scriptAddress = CSL.EnterpriseAddress.new(0, CSL.Credential.from_scripthash(CSL.ScriptHash.from_hex('ab'.repeat(28)))).to_address().to_bech32()
const BYRON_MAINNET = 'Ae2tdPwUPEZFRbyhz3cpfC2CumGzNkFBN2L42rcUc2yjQpEkxDbkPodpMAi'

function thrown(f: () => unknown) {
  try {
    f()
  } catch (error) {
    return error as { code: string; message: string; target?: string }
  }
  throw new Error('nothing thrown')
}

describe('addresses', () => {
  test('a payment address of the network is answered as given', () => {
    expect(parsePaymentAddress(` ${base(0)} `, 0, 'address')).toBe(base(0))
  })

  test.each([
    ['a stake address', reward(0)],
    ['a Byron address', BYRON_MAINNET],
    ['bech32 of something else', CSL.Ed25519KeyHash.from_hex('00'.repeat(28)).to_bech32('addr_test')],
    ['not a string', 42],
    ['a broken checksum', base(0).slice(0, -1) + (base(0).endsWith('q') ? 'p' : 'q')],
  ])('%s is INVALID_ADDRESS', (_, value) => {
    expect(thrown(() => parsePaymentAddress(value, 0, 'outputs/0/address'))).toMatchObject({ code: 'INVALID_ADDRESS', target: 'outputs/0/address' })
  })

  test('an address of the other network is WRONG_NETWORK, with one message wherever it is checked', () => {
    const builders = thrown(() => parsePaymentAddress(base(1), 0, 'changeAddress'))
    const services = thrown(() => parseAddress(base(1), 'preprod'))
    expect(builders).toMatchObject({ code: 'WRONG_NETWORK', message: `'${base(1)}' belongs to mainnet, but this deployment serves a test network` })
    expect(services.message).toBe(builders.message)
    expect(thrown(() => parsePaymentAddress(base(0), 1, 'address')).message).toMatch(/belongs to a test network, but this deployment serves mainnet$/)
    expect(thrown(() => parseStakeAddress(reward(1), 'preview'))).toMatchObject({ code: 'WRONG_NETWORK', message: expect.stringMatching(/belongs to mainnet/) })
  })

  test('stake addresses: INVALID_STAKE_ADDRESS for anything else', () => {
    expect(parseRewardAddress(reward(0), 0, 'stakeAddress')).toBe(reward(0))
    expect(thrown(() => parseRewardAddress(base(0), 0, 'stakeAddress')).code).toBe('INVALID_STAKE_ADDRESS')
  })

  test('the payment key hash of an address: null for script-locked and malformed addresses', () => {
    expect(paymentKeyHash(base(0, 7))).toBe(keyHash(7).to_hex())
    expect(paymentKeyHash(scriptAddress)).toBeNull()
    expect(paymentKeyHash('addr_test1nope')).toBeNull()
    expect(paymentKeyHash(BYRON_MAINNET)).toBeNull()
  })

  test('Byron addresses decode, keep their base58 text and tell their network by protocol magic', () => {
    const byron = decodeAddress(BYRON_MAINNET)!
    expect(addressText(byron)).toBe(BYRON_MAINNET)
    expect(addressNetworkId(byron)).toBe(1)
    expect(addressText(decodeAddress(base(0))!)).toBe(base(0))
    expect(decodeAddress('pool1' + 'q'.repeat(50))).toBeUndefined()
  })
})

describe('output references', () => {
  const hash = 'ab'.repeat(32)

  test('text, object and CSL forms convert into each other', () => {
    const input = transactionInput(`${hash}#3`)
    expect(refOfInput(input)).toBe(`${hash}#3`)
    expect(refOf({ txHash: hash, outputIndex: 3 })).toBe(`${hash}#3`)
    expect(parseRef(`${hash}#3`)).toEqual({ txHash: hash, outputIndex: 3 })
    expect(transactionInput({ txHash: hash, outputIndex: 3 }).to_hex()).toBe(input.to_hex())
  })

  test('the ledger orders inputs by transaction hash, then by index as a number', () => {
    const refs = [`${'cd'.repeat(32)}#0`, `${hash}#10`, `${hash}#9`]
    expect(sortedRefs(refs)).toEqual([`${hash}#9`, `${hash}#10`, `${'cd'.repeat(32)}#0`])
    expect(compareRefs(`${hash}#2`, `${hash}#2`)).toBe(0)
  })

  test('listOf answers the items of a CSL collection, and none for an absent one', () => {
    const inputs = CSL.TransactionInputs.new()
    inputs.add(transactionInput(`${hash}#0`))
    inputs.add(transactionInput(`${hash}#1`))
    expect(listOf(inputs).map(refOfInput)).toEqual([`${hash}#0`, `${hash}#1`])
    expect(listOf(undefined)).toEqual([])
  })
})

describe('values', () => {
  const unit = 'cd'.repeat(28) + Buffer.from('Token').toString('hex')

  test('lovelace and assets go to CSL and back unchanged', () => {
    const value = { coin: 5_000_000n, assets: new Map([[unit, 42n], ['ef'.repeat(28), 1n]]) }
    expect(fromCslValue(toCslValue(value))).toEqual(value)
    expect(toCslValue({ coin: 1n, assets: new Map() }).multiasset()).toBeUndefined()
  })

  test('a mint reads as positive quantities for minting and negative ones for burning', () => {
    const mint = CSL.Mint.new()
    const assets = CSL.MintAssets.new()
    assets.insert(CSL.AssetName.new(Buffer.from('Token')), CSL.Int.new_negative(CSL.BigNum.from_str('7')))
    mint.insert(CSL.ScriptHash.from_hex('cd'.repeat(28)), assets)
    expect(fromCslMint(mint)).toEqual(new Map([[unit, -7n]]))
    expect(fromCslMint(undefined)).toEqual(new Map())
  })
})

describe('native scripts', () => {
  const sig = (n: number) => CSL.NativeScript.new_script_pubkey(CSL.ScriptPubkey.new(keyHash(n)))
  const list = (...scripts: CSL.NativeScript[]) => {
    const result = CSL.NativeScripts.new()
    scripts.forEach(script => result.add(script))
    return result
  }
  const all = (...scripts: CSL.NativeScript[]) => CSL.NativeScript.new_script_all(CSL.ScriptAll.new(list(...scripts)))
  const any = (...scripts: CSL.NativeScript[]) => CSL.NativeScript.new_script_any(CSL.ScriptAny.new(list(...scripts)))
  const atLeast = (n: number, ...scripts: CSL.NativeScript[]) => CSL.NativeScript.new_script_n_of_k(CSL.ScriptNOfK.new(n, list(...scripts)))
  const after = (slot: number) => CSL.NativeScript.new_timelock_start(CSL.TimelockStart.new_timelockstart(CSL.BigNum.from_str(String(slot))))
  const before = (slot: number) => CSL.NativeScript.new_timelock_expiry(CSL.TimelockExpiry.new_timelockexpiry(CSL.BigNum.from_str(String(slot))))
  const signers = (...keys: number[]) => new Set(keys.map(n => keyHash(n).to_hex()))
  const open = { invalidBefore: null, invalidHereafter: null }

  test('the signers of a script are every sig, wherever it is', () => {
    expect(nativeScriptSigners(all(sig(1), any(sig(2), atLeast(1, sig(3))), after(5)))).toEqual([1, 2, 3].map(n => keyHash(n).to_hex()))
  })

  test('required time locks: those at the top or under all, the latest after and the earliest before', () => {
    expect(requiredTimeLocks(all(after(10), after(20), before(100), all(before(90)), any(before(5))))).toEqual({ invalidBefore: 20n, invalidHereafter: 90n })
    expect(requiredTimeLocks(any(after(10)))).toEqual(open)
    expect(requiredTimeLocks(before(7))).toEqual({ invalidBefore: null, invalidHereafter: 7n })
  })

  test.each([
    ['sig with its signer', sig(1), signers(1), open, true],
    ['sig without', sig(1), signers(2), open, false],
    ['all, one missing', all(sig(1), sig(2)), signers(1), open, false],
    ['any, one there', any(sig(1), sig(2)), signers(2), open, true],
    ['atLeast 2 of 3, two there', atLeast(2, sig(1), sig(2), sig(3)), signers(1, 3), open, true],
    ['atLeast 2 of 3, one there', atLeast(2, sig(1), sig(2), sig(3)), signers(3), open, false],
    ['after 10, valid from 10', after(10), signers(), { invalidBefore: 10n, invalidHereafter: null }, true],
    ['after 10, valid from 9', after(10), signers(), { invalidBefore: 9n, invalidHereafter: null }, false],
    ['after 10, no start', after(10), signers(), open, false],
    ['before 10, valid until 10', before(10), signers(), { invalidBefore: null, invalidHereafter: 10n }, true],
    ['before 10, valid until 11', before(10), signers(), { invalidBefore: null, invalidHereafter: 11n }, false],
  ])('%s', (_, script, keys, interval, satisfied) => {
    expect(nativeScriptSatisfied(script, keys, interval)).toBe(satisfied)
  })
})

describe('CSL configuration from protocol parameters', () => {
  test('the builder prices a transaction as the protocol does: min_fee_a × size + min_fee_b', () => {
    const builder = CSL.TransactionBuilder.new(transactionBuilderConfig(PROTOCOL_PARAMETERS))
    const address = CSL.Address.from_bech32(base(0))
    builder.add_regular_input(address, transactionInput(`${'ab'.repeat(32)}#0`), CSL.Value.new(CSL.BigNum.from_str('10000000')))
    builder.add_output(CSL.TransactionOutput.new(address, CSL.Value.new(CSL.BigNum.from_str('2000000'))))
    builder.set_ttl_bignum(CSL.BigNum.from_str('1000'))
    builder.add_change_if_needed(address)
    const tx = builder.build_tx_unsafe()
    // The fee pays for the transaction with one vkey witness (the builder counts it in): at least the unsigned size, at most 200 bytes more.
    const fee = BigInt(tx.body().fee().to_str())
    const unsigned = BigInt(tx.to_bytes().length)
    expect(fee).toBeGreaterThanOrEqual(44n * unsigned + 155381n)
    expect(fee).toBeLessThanOrEqual(44n * (unsigned + 200n) + 155381n)
  })

  test.each([[['PlutusV3']], [['PlutusV2']], [['PlutusV1']], [['PlutusV1', 'PlutusV2', 'PlutusV3']]] as const)(
    'the language views of %j are those the script data hash of CSL commits to', languages => {
      const models = CSL.Costmdls.new()
      const costModels = PROTOCOL_PARAMETERS.costModels
      for (const language of languages) {
        const model = CSL.CostModel.new()
        costModels[language].forEach((cost, i) => model.set(i, CSL.Int.from_str(String(cost))))
        const cslLanguage = { PlutusV1: CSL.Language.new_plutus_v1(), PlutusV2: CSL.Language.new_plutus_v2(), PlutusV3: CSL.Language.new_plutus_v3() }[language]
        models.insert(cslLanguage, model)
      }
      const redeemers = CSL.Redeemers.new()
      redeemers.add(CSL.Redeemer.new(CSL.RedeemerTag.new_spend(), CSL.BigNum.zero(), CSL.PlutusData.new_integer(CSL.BigInt.from_str('1')), CSL.ExUnits.new(CSL.BigNum.one(), CSL.BigNum.one())))
      const ours = blake2b256Hex(Buffer.concat([redeemers.to_bytes(), languageViews(costModels, new Set(languages))]))
      expect(ours).toBe(CSL.hash_script_data(redeemers, models).to_hex())
    })
})
