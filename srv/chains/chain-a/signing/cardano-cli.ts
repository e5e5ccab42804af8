import { ApiError, badInput } from '../../../lib/errors.ts'
import { hexBytes } from '../cbor.ts'
import { listOf } from '../csl.ts'
import { parseTransaction } from './witnesses.ts'

/**
 * The offline cardano-cli recipe for a signing request: the text envelope to write to a file, the
 * `transaction sign` command, and how to read the signed transaction back. A full unsigned
 * transaction (the envelope type `Tx <Era>Era` that `transaction build` writes) is signed with
 * `--tx-file`; `--tx-body-file` is for body files.
 */

interface TextEnvelope {
  type: string
  description: string
  cborHex: string
}

interface CliSigningInput {
  unsignedTxCbor: string
  /** mainnet | preprod | preview, or a local network such as devnet (then `networkMagic` is needed). */
  network: string
  /** The magic of a network other than mainnet, preprod and preview. */
  networkMagic?: number
  /** The cardano-cli era command group and envelope era (default conway). */
  era?: string
  /** Key hash of the payer, whose key is `payment.skey`; other required signers get a file each. */
  payerKeyHash?: string
  unsignedFile?: string
  signedFile?: string
}

interface SigningKeyFile {
  file: string
  /** The key hash whose signing key belongs in the file (unknown for the payer unless given). */
  keyHash?: string
  purpose: string
}

interface CliSigningRecipe {
  envelope: TextEnvelope
  /** The envelope as cardano-cli writes it: the content of `unsignedFile`. */
  envelopeJson: string
  unsignedFile: string
  signedFile: string
  signingKeys: SigningKeyFile[]
  networkFlag: string[]
  args: string[]
  /** The sign command on one line. */
  command: string
  /** Reads the signed transaction's CBOR, which is what the client sends back. */
  readBackCommand: string
  /** Write, sign and read back, ready to paste into a shell. */
  script: string
}

const KNOWN_MAGICS: Record<string, number> = { preprod: 1, preview: 2 }

/** `--mainnet` or `--testnet-magic N`. */
export function networkFlag(network: string, networkMagic?: number): string[] {
  if (network === 'mainnet') return ['--mainnet']
  const magic = KNOWN_MAGICS[network] ?? networkMagic
  if (magic === undefined || !Number.isInteger(magic) || magic < 0) {
    throw badInput('NETWORK_MAGIC_REQUIRED', `network '${network}' needs its network magic for cardano-cli`, 'networkMagic')
  }
  return ['--testnet-magic', String(magic)]
}

/** `Tx ConwayEra` for era `conway`. */
function envelopeType(era: string): string {
  if (!/^[a-z]+$/.test(era)) throw badInput('INVALID_ERA', `'${era}' is not a cardano-cli era (such as conway)`, 'era')
  return `Tx ${era[0].toUpperCase()}${era.slice(1)}Era`
}

export function textEnvelope(unsignedTxCbor: string, era = 'conway'): TextEnvelope {
  parseTransaction(unsignedTxCbor)
  const cborHex = Buffer.from(hexBytes(unsignedTxCbor, 'unsignedTxCbor')).toString('hex')
  return { type: envelopeType(era), description: 'Ledger Cddl Format', cborHex }
}

export function cardanoCliRecipe(input: CliSigningInput): CliSigningRecipe {
  const era = input.era ?? 'conway'
  const unsignedFile = input.unsignedFile ?? 'tx.unsigned'
  const signedFile = input.signedFile ?? 'tx.signed'
  const envelope = textEnvelope(input.unsignedTxCbor, era)
  const envelopeJson = JSON.stringify(envelope, null, 4) + '\n'
  const signingKeys = signingKeyFiles(input.unsignedTxCbor, input.payerKeyHash)
  const flag = networkFlag(input.network, input.networkMagic)
  const args = [
    era, 'transaction', 'sign',
    '--tx-file', unsignedFile,
    ...signingKeys.flatMap(key => ['--signing-key-file', key.file]),
    ...flag,
    '--out-file', signedFile,
  ]
  const command = ['cardano-cli', ...args].join(' ')
  const readBackCommand = `jq -r .cborHex ${signedFile}`
  const script = [`cat > ${unsignedFile} <<'EOF'`, envelopeJson.trimEnd(), 'EOF', command, readBackCommand].join('\n') + '\n'
  return { envelope, envelopeJson, unsignedFile, signedFile, signingKeys, networkFlag: flag, args, command, readBackCommand, script }
}

/** One key file for the payer, and one for each other key hash the body requires. */
function signingKeyFiles(unsignedTxCbor: string, payerKeyHash?: string): SigningKeyFile[] {
  const payer: SigningKeyFile = { file: 'payment.skey', purpose: 'the payer (owner of the spent inputs)', ...(payerKeyHash ? { keyHash: payerKeyHash.toLowerCase() } : {}) }
  const required = listOf(parseTransaction(unsignedTxCbor).body().required_signers()).map(hash => hash.to_hex())
  const others = [...new Set(required)].filter(hash => hash !== payer.keyHash)
  return [payer, ...others.map((keyHash, i) => ({ file: `required-signer-${i + 1}.skey`, keyHash, purpose: 'a required signer of the transaction' }))]
}

/**
 * The signed transaction's CBOR hex from what the client sends back: the signed file's content (a
 * text envelope) or its `cborHex` alone.
 */
export function signedCborFromCli(answer: string): string {
  const text = answer.trim()
  if (!text.startsWith('{')) return Buffer.from(hexBytes(text, 'signedTxCbor')).toString('hex')
  let envelope: Partial<TextEnvelope>
  try {
    envelope = JSON.parse(text)
  } catch {
    throw new ApiError(400, 'MALFORMED_ENVELOPE', 'the signed file is not a cardano-cli text envelope (invalid JSON)', { target: 'signedTxCbor' })
  }
  if (typeof envelope.type !== 'string' || !/^(Witnessed )?Tx [A-Z][a-z]+Era$/.test(envelope.type) || typeof envelope.cborHex !== 'string') {
    throw new ApiError(400, 'MALFORMED_ENVELOPE', `the signed file is not a signed transaction envelope (type '${envelope.type}')`, { target: 'signedTxCbor' })
  }
  return Buffer.from(hexBytes(envelope.cborHex, 'signedTxCbor')).toString('hex')
}
