import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { fileURLToPath } from 'node:url'
import { z } from 'zod'
import type { GatewayClient } from '../gateway-client.ts'
import { CREATES, register } from '../tools.ts'
import { uuid } from './read.ts'

/**
 * The sign tools: a signing request hands a build to a signer outside (a CIP-30 wallet, cardano-cli,
 * or on the devnet the development signer), and verify_signature checks what the signer answered.
 * Neither this server nor the gateway ever holds a key: the agent passes the unsigned transaction
 * to whoever holds it, and the witnesses back.
 */

const SERVICE = 'chaina-sign'

const SIGNER_TYPES = ['browser-wallet', 'cardano-cli'] as const

/** The package this server runs from: the development signer is its `npm run devnet -- sign`. */
const PACKAGE_ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '')

const shellQuoted = (text: string) => `'${text.replaceAll(`'`, `'\\''`)}'`

type SigningRequest = Record<string, unknown> & {
  ID: string
  txHash: string
  unsignedTxCbor: string
  signerType: string
  network?: string | null
  cardanoCliCommand?: string | null
  cardanoCliEnvelope?: string | null
  cardanoCliScript?: string | null
}

const handBack = (request: SigningRequest) =>
  `Hand the signer's answer back as signedTxCbor: to submit_signed_transaction with signingRequestId ${request.ID} (it verifies, then submits), or first to verify_signature to check it without submitting.`

/** Exactly what to sign and how, for the request's signer type (and the development signer on the devnet). */
function howToSign(request: SigningRequest) {
  const common = { txHash: request.txHash, unsignedTxCbor: request.unsignedTxCbor, handBack: handBack(request) }
  const wallet = request.signerType === 'browser-wallet' && {
    cip30: `In the sender's CIP-30 wallet: const witnessSet = await api.signTx(unsignedTxCbor, true). The witness set hex it returns is signedTxCbor (a whole signed transaction is accepted too).`,
  }
  const cli = request.signerType === 'cardano-cli' && {
    cardanoCli: {
      steps: 'Write envelope to tx.unsigned, run command with the sender\'s payment.skey (script does both and prints the signed CBOR). signedTxCbor is the content of tx.signed (the text envelope) or its cborHex.',
      command: request.cardanoCliCommand ?? null,
      envelope: request.cardanoCliEnvelope ?? null,
      script: request.cardanoCliScript ?? null,
    },
  }
  const devnet = request.network === 'devnet' && {
    devnetSigner: {
      command: `npm --prefix ${shellQuoted(PACKAGE_ROOT)} run -s devnet -- sign --wallet <n> --tx ${request.unsignedTxCbor}`,
      steps: 'Development only (this build is for the local devnet, whose test wallets\' keys are public): replace <n> with the number of the test wallet that is the sender (npm run devnet -- wallets lists them, the first is 1). It prints JSON { txHash, witnessSetCbor, signedTxCbor }: hand back its witnessSetCbor (or its signedTxCbor) as signedTxCbor.',
    },
  }
  return { ...common, ...wallet, ...cli, ...devnet }
}

const requestShape = {
  ID: z.string().describe('The signingRequestId'),
  status: z.string().describe('pending → signed → verified → submitted; or cancelled, expired, failed'),
  signerType: z.string(),
  txHash: z.string().describe('The transaction id every signature must cover'),
  unsignedTxCbor: z.string().describe('The unsigned transaction, CBOR hex: what the signer signs'),
  expiresAt: z.string().describe('The request\'s answer must come before'),
}

/** Registers create_signing_request and verify_signature. */
export function registerSignTools(server: McpServer, client: GatewayClient) {
  register(server, client, {
    name: 'create_signing_request',
    title: 'Request a signature for a build',
    description: 'Opens a signing request for a build (status built): the build is reserved for it until it expires. Answers the request and howToSign: the unsigned CBOR and txHash, and exactly how to get it signed outside this server (a CIP-30 wallet\'s signTx, the cardano-cli command for signerType cardano-cli, and on the devnet the development signer\'s command). Neither this server nor the gateway holds keys. Then: sign, and call submit_signed_transaction (or verify_signature first) with the request ID and the signer\'s answer. Asking again for the same build and signer type answers the same open request. Costs 5 units.',
    input: {
      buildId: uuid('The build\'s ID, as a build_… tool answered it'),
      signerType: z.enum(SIGNER_TYPES).default('browser-wallet').describe('Who signs: browser-wallet (a CIP-30 wallet: signTx answers a witness set) or cardano-cli (the answer carries the exact command and the transaction as a text envelope)'),
      signerInfo: z.string().max(100).optional().describe('Free text about the signer, kept with the request and in its audit log: a wallet\'s name, an operator'),
      expiresInSeconds: z.number().int().min(1).max(86400).optional().describe('How long the request stays open, in seconds (default 1800); never longer than the build\'s validity'),
    },
    output: {
      ...requestShape,
      howToSign: z.looseObject({
        txHash: z.string(),
        unsignedTxCbor: z.string(),
        handBack: z.string().describe('Where the signer\'s answer goes'),
        cip30: z.string().optional().describe('browser-wallet: the CIP-30 call'),
        cardanoCli: z.looseObject({ command: z.string().nullable() }).optional().describe('cardano-cli: the command, the text envelope to write to tx.unsigned, and a script doing both'),
        devnetSigner: z.looseObject({ command: z.string() }).optional().describe('devnet builds: the development signer\'s command'),
      }).describe('Exactly what to sign and how'),
    },
    annotations: CREATES,
    async run(args, calls) {
      const request = await calls.action<SigningRequest>(SERVICE, 'CreateSigningRequest', args)
      return { ...request, howToSign: howToSign(request) }
    },
  })

  register(server, client, {
    name: 'verify_signature',
    title: 'Verify a signer\'s answer',
    description: 'Checks what a signer answered for a signing request, without submitting: every witness must be a valid Ed25519 signature over the transaction id, and together they must cover every input\'s payment key and required signer. The outcome is stored on the request (verified, or failed with the missing signers and problems) and answered. Then, when valid: submit_signed_transaction with signingRequestId alone. When not valid the request has failed: create_signing_request again and sign with the missing keys. A request is verified once (again answers INVALID_REQUEST_STATE). Costs 5 units.',
    input: {
      signingRequestId: uuid('The signing request\'s ID (create_signing_request answered it)'),
      signedTxCbor: z.string().min(2).describe('The signer\'s answer: a CIP-30 witness set (hex), a whole signed transaction (hex), or cardano-cli\'s signed text envelope (the JSON text of tx.signed)'),
      signerType: z.enum(SIGNER_TYPES).optional().describe('The signer type, when given it must be the request\'s'),
      signerInfo: z.string().max(100).optional().describe('Free text about who signed, kept in the audit log'),
    },
    output: {
      signingRequestId: z.string(),
      status: z.string().describe('verified or failed'),
      valid: z.boolean(),
      txHash: z.string(),
      witnessCount: z.number(),
      signerKeyHashes: z.array(z.string()).describe('Key hashes (56 hex) whose valid signatures it carries'),
      missingSigners: z.array(z.looseObject({ keyHash: z.string(), neededFor: z.string() })).describe('Keys that still must sign, and what needs each'),
      invalidSignatures: z.array(z.string()),
      problems: z.array(z.string()),
      next: z.string(),
    },
    // Stores the outcome on the request, so not read-only; the same answer again changes nothing more.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    async run(args, calls) {
      const result = await calls.action<{ valid: boolean; signingRequestId: string }>(SERVICE, 'VerifySignature', args)
      const next = result.valid
        ? `Call submit_signed_transaction with signingRequestId ${result.signingRequestId} (signedTxCbor is not needed again).`
        : 'The request has failed: call create_signing_request for the build again and have the missing signers sign.'
      return { ...result, next }
    },
  })
}
