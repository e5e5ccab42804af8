import { existsSync, readFileSync, statSync } from 'node:fs'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import * as MS from '@emurgo/cardano-message-signing-nodejs'
import { addressNetworkId, addressText, decodeAddress, listOf } from '../../srv/chains/chain-a/csl.ts'
import { addVkeyWitnesses, messageOf, parseTransaction } from '../../srv/chains/chain-a/signing/witnesses.ts'
import { verifySignedTransaction } from '../../srv/chains/chain-a/signing/verify.ts'
import type { WalletKeys } from './genesis.ts'

/**
 * The development signer behind `npm run devnet -- sign`: signs an unsigned transaction with a
 * devnet test wallet's keys and answers what a CIP-30 wallet's `signTx(tx, true)` answers (a
 * witness set with the wallet's vkey witnesses), plus the signed transaction, whose body bytes
 * (and so its hash) are those of the unsigned one; and behind `npm run devnet -- sign-data`, what
 * CIP-30's `signData(address, payload)` answers. The devnet's wallet keys are public: the CLI only
 * signs for the devnet, never in production, and never a transaction or an address for mainnet.
 */

interface DevSignature {
  txHash: string
  /** TransactionWitnessSet CBOR hex, as CIP-30 `signTx(tx, partialSign = true)` returns it. */
  witnessSetCbor: string
  signedTxCbor: string
}

/** A bad argument or a refusal: its message is the one line the CLI prints. */
export class SignerInputError extends Error {}

const MAINNET = 1
const MAX_FILE_BYTES = 16 * 1024 * 1024

/**
 * The transaction's CBOR hex from the `--tx` argument: the hex itself, or a file that holds it as
 * hex text or as a cardano-cli text envelope (`{ "type", "cborHex" }`).
 */
export function transactionArgument(value: string): string {
  const text = value.trim()
  if (!existsSync(value)) {
    if (/^[0-9a-fA-F]+$/.test(text)) return text
    throw new SignerInputError(`--tx is neither transaction CBOR in hex nor a file: ${shorten(value)}`)
  }
  if (!statSync(value).isFile() || statSync(value).size > MAX_FILE_BYTES) throw new SignerInputError(`--tx ${value} is not a file of at most 16 MiB`)
  const content = readFileSync(value, 'utf8').trim()
  if (/^[0-9a-fA-F]+$/.test(content)) return content
  if (!content.startsWith('{')) throw new SignerInputError(`--tx ${value} holds neither CBOR hex nor a cardano-cli text envelope`)
  let envelope: { cborHex?: unknown }
  try {
    envelope = JSON.parse(content)
  } catch {
    throw new SignerInputError(`--tx ${value} is neither CBOR hex nor a cardano-cli text envelope (invalid JSON)`)
  }
  if (typeof envelope?.cborHex !== 'string') throw new SignerInputError(`--tx ${value} is a JSON file without a cborHex field, not a cardano-cli text envelope`)
  return envelope.cborHex
}

/** Parses the unsigned transaction; refuses anything else, and a transaction for mainnet. */
function unsignedTransaction(hex: string): CSL.FixedTransaction {
  let tx: CSL.FixedTransaction
  try {
    tx = parseTransaction(hex, '--tx')
  } catch (error) {
    throw new SignerInputError(messageOf(error))
  }
  const mainnet = mainnetPart(tx.body())
  if (mainnet) throw new SignerInputError(`refusing to sign a transaction for mainnet (network id 1): ${mainnet}; the dev signer signs devnet transactions only`)
  return tx
}

/** What in the body is for mainnet, if anything: its network id, an output or collateral return address, a withdrawal. */
function mainnetPart(body: CSL.TransactionBody): string | undefined {
  if (body.network_id()?.kind() === CSL.NetworkIdKind.Mainnet) return 'its body says network id 1'
  const outputs = listOf(body.outputs())
  const index = outputs.findIndex(output => addressNetworkId(output.address()) === MAINNET)
  if (index >= 0) return `output ${index} pays ${addressText(outputs[index].address())}`
  const collateralReturn = body.collateral_return()
  if (collateralReturn && addressNetworkId(collateralReturn.address()) === MAINNET) return `the collateral return pays ${addressText(collateralReturn.address())}`
  const withdrawal = listOf(body.withdrawals()?.keys()).find(address => address.to_address().network_id() === MAINNET)
  if (withdrawal) return `it withdraws from ${withdrawal.to_address().to_bech32()}`
  return undefined
}

/**
 * Signs with the wallet's payment key and, when the body needs it (a withdrawal, a certificate or
 * a required signer naming it), its stake key, as a wallet signs for the keys it holds.
 */
export async function signWithWallet(unsignedTxHex: string, wallet: WalletKeys): Promise<DevSignature> {
  const tx = unsignedTransaction(unsignedTxHex)
  const hash = tx.transaction_hash()
  const keys = [wallet.payment]
  if (await stakeKeyNeeded(tx, wallet)) keys.push(wallet.stake)
  const vkeys = CSL.Vkeywitnesses.new()
  for (const key of keys) vkeys.add(CSL.make_vkey_witness(hash, key))
  const witnessSet = CSL.TransactionWitnessSet.new()
  witnessSet.set_vkeys(vkeys)
  const signed = addVkeyWitnesses(tx.to_hex(), listOf(vkeys))
  return { txHash: signed.txHash, witnessSetCbor: witnessSet.to_hex(), signedTxCbor: signed.cborHex }
}

/** Whether the body names the wallet's stake key among the keys that must sign it. */
async function stakeKeyNeeded(tx: CSL.FixedTransaction, wallet: WalletKeys): Promise<boolean> {
  const stakeKeyHash = wallet.stake.to_public().hash().to_hex()
  const paymentOnly = CSL.FixedTransaction.from_bytes(tx.to_bytes())
  paymentOnly.sign_and_add_vkey_signature(wallet.payment)
  const verification = await verifySignedTransaction(paymentOnly.to_hex(), {
    expectedBodyHash: tx.transaction_hash().to_hex(),
    // Whose inputs these are does not matter here: only what the body itself names.
    inputOwners: () => undefined,
  })
  return verification.missingSigners.some(signer => signer.keyHash === stakeKeyHash)
}

/** CIP-30's DataSignature: a COSE_Sign1 and the COSE_Key of the key that signed it, both CBOR hex. */
interface DataSignature {
  signature: string
  key: string
}

/**
 * Signs `payloadHex` as CIP-30's `signData(address, payload)` does (CIP-8): a COSE_Sign1 whose
 * protected header names EdDSA and the address's raw bytes, over the payload itself (not hashed),
 * by the wallet's payment key for its base or enterprise address and by its stake key for its
 * reward address. Built with cardano-message-signing, as wallets do; the gateway verifies with its
 * own implementation (signing/data-signature.ts).
 */
export function signDataWithWallet(addressArgument: string, payloadHex: string, wallet: Pick<WalletKeys, 'payment' | 'stake'>): DataSignature {
  const address = signingAddress(addressArgument)
  const signer = signingKeyFor(address, wallet)
  const payload = payloadBytes(payloadHex)

  const protectedHeaders = MS.HeaderMap.new()
  protectedHeaders.set_algorithm_id(MS.Label.from_algorithm_id(MS.AlgorithmId.EdDSA))
  protectedHeaders.set_header(MS.Label.new_text('address'), MS.CBORValue.new_bytes(address.to_bytes()))
  const unprotectedHeaders = MS.HeaderMap.new()
  unprotectedHeaders.set_header(MS.Label.new_text('hashed'), MS.CBORValue.new_special(MS.CBORSpecial.new_bool(false)))
  const builder = MS.COSESign1Builder.new(MS.Headers.new(MS.ProtectedHeaderMap.new(protectedHeaders), unprotectedHeaders), payload, false)
  const signature = signer.sign(builder.make_data_to_sign().to_bytes()).to_bytes()
  const sign1 = builder.build(signature)
  return { signature: Buffer.from(sign1.to_bytes()).toString('hex'), key: Buffer.from(coseKeyOf(signer.to_public()).to_bytes()).toString('hex') }
}

/** The COSE_Key CIP-30 answers: OKP, EdDSA, curve Ed25519 (-1: 6) and the public key (-2: x). */
function coseKeyOf(publicKey: CSL.PublicKey): MS.COSEKey {
  const key = MS.COSEKey.new(MS.Label.from_key_type(MS.KeyType.OKP))
  key.set_algorithm_id(MS.Label.from_algorithm_id(MS.AlgorithmId.EdDSA))
  key.set_header(MS.Label.new_int(MS.Int.new_negative(MS.BigNum.from_str('1'))), MS.CBORValue.new_int(MS.Int.new_i32(6)))
  key.set_header(MS.Label.new_int(MS.Int.new_negative(MS.BigNum.from_str('2'))), MS.CBORValue.new_bytes(publicKey.as_bytes()))
  return key
}

/** The address to sign for, in bech32 or as hex bytes (CIP-30 takes both); never one for mainnet. */
function signingAddress(text: string): CSL.Address {
  const trimmed = text.trim()
  const address = /^[0-9a-fA-F]+$/.test(trimmed) ? addressFromHex(trimmed) : decodeAddress(trimmed)
  if (!address) throw new SignerInputError(`--address is not an address in bech32 or hex: ${shorten(text)}`)
  if (addressNetworkId(address) === MAINNET) throw new SignerInputError(`refusing to sign for a mainnet address (network id 1): ${shorten(text)}; the dev signer signs for devnet addresses only`)
  return address
}

function addressFromHex(hex: string): CSL.Address | undefined {
  try {
    return CSL.Address.from_hex(hex)
  } catch {
    return undefined
  }
}

/** The wallet's key that signs for the address: the payment key for base and enterprise addresses, the stake key for a reward address. */
function signingKeyFor(address: CSL.Address, wallet: Pick<WalletKeys, 'payment' | 'stake'>): CSL.PrivateKey {
  const kind = address.kind()
  const credential = kind === CSL.AddressKind.Reward ? CSL.RewardAddress.from_address(address)?.payment_cred()
    : kind === CSL.AddressKind.Base || kind === CSL.AddressKind.Enterprise ? address.payment_cred() : undefined
  if (!credential) throw new SignerInputError(`${addressText(address)} is neither a base, enterprise nor reward address; CIP-30 signData signs for those only`)
  const key = kind === CSL.AddressKind.Reward ? wallet.stake : wallet.payment
  const keyHash = credential.to_keyhash()?.to_hex()
  if (keyHash !== key.to_public().hash().to_hex()) throw new SignerInputError(`${addressText(address)} is not this wallet's: its ${kind === CSL.AddressKind.Reward ? 'stake' : 'payment'} credential is not the wallet's key (CIP-30: AddressNotPK)`)
  return key
}

function payloadBytes(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new SignerInputError(`--payload must be hex bytes: ${shorten(hex)}`)
  return Buffer.from(hex, 'hex')
}

const shorten = (text: string) => (text.length > 80 ? `${text.slice(0, 77)}...` : text)
