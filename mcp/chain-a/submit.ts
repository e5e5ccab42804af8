import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { setTimeout as sleep } from 'node:timers/promises'
import { z } from 'zod'
import { GatewayError, type GatewayClient } from '../gateway-client.ts'
import { READS, register, ToolInputError, type Calls } from '../tools.ts'
import { txHash, uuid } from './read.ts'

/**
 * The submit tools: a signed transaction goes to the ledger once (through the signing service when
 * it has a request, else straight through the transaction service), and its status is followed up
 * to confirmation, optionally waiting with progress notifications.
 */

const SIGN = 'chaina-sign'
const TX = 'chaina-transaction'

/** How long between two looks at a transaction's status while waiting. */
const LOOK_INTERVAL_MS = 2000
const FINAL_STATES = ['confirmed', 'failed']

type Submission = Record<string, unknown> & { ID: string; txHash: string }
type Status = Record<string, unknown> & { txHash: string; status: string; confirmations: number }

const submissionShape = {
  ID: z.string().describe('The submissionId: give it to get_submission_status'),
  txHash: z.string(),
  status: z.string().describe('pending → submitted (the ledger accepted it) → confirmed (in a block); or failed with the ledger\'s reason'),
  next: z.string(),
}

/** The submission without the signed CBOR the agent already has. */
function answered({ signedTxCbor: _signed, ...submission }: Submission) {
  return { ...submission, next: `Call get_submission_status with submissionId ${submission.ID} (and waitSeconds, e.g. 60) until it is confirmed.` }
}

/** The transaction's status, once: on chain with its confirmations, or as submitted here. */
const look = (calls: Calls, hash: string) => calls.action<Status>(TX, 'GetTransactionStatus', { txHash: hash })

/** Registers submit_signed_transaction and get_submission_status. */
export function registerSubmitTools(server: McpServer, client: GatewayClient) {
  register(server, client, {
    name: 'submit_signed_transaction',
    title: 'Submit a signed transaction',
    description: 'Submits a signed chain-A transaction to the ledger: irrevocable, it spends the inputs. With signingRequestId (the usual way, after create_signing_request): the signer\'s answer (a CIP-30 witness set, a whole signed transaction or cardano-cli\'s signed envelope) is verified and merged into the build, then submitted; signedTxCbor may be left out when verify_signature already verified it. Without a request: signedTxCbor must be a whole signed transaction (not a bare witness set), and buildId says which build it is (found by its hash when left out). Each transaction is submitted once (a second time answers TX_ALREADY_SUBMITTED); a rejection by the ledger answers TX_REJECTED with its rule. Costs 20 units. Next: get_submission_status.',
    input: {
      signingRequestId: uuid('The signing request\'s ID (create_signing_request): submits through the signing service').optional(),
      signedTxCbor: z.string().min(2).optional().describe('With signingRequestId: the signer\'s answer (witness set hex, signed transaction hex or cardano-cli\'s signed text envelope), not needed once verified. Without: the whole signed transaction, CBOR hex'),
      buildId: uuid('Without signingRequestId: the build the signed transaction is (its body must be unchanged)').optional(),
      signerType: z.enum(['browser-wallet', 'cardano-cli']).optional().describe('With signingRequestId: the signer type, which must be the request\'s'),
      signerInfo: z.string().max(100).optional().describe('With signingRequestId: free text about who signed, kept in the audit log'),
    },
    output: submissionShape,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    async run({ signingRequestId, signedTxCbor, buildId, signerType, signerInfo }, calls) {
      if (signingRequestId) {
        if (buildId) throw new ToolInputError('give buildId only without signingRequestId: a signing request knows its build')
        return answered(await calls.action<Submission>(SIGN, 'SubmitVerifiedTransaction', { signingRequestId, signedTxCbor, signerType, signerInfo }))
      }
      if (!signedTxCbor) throw new ToolInputError('give signingRequestId (after create_signing_request), or signedTxCbor holding the whole signed transaction')
      if (signerType || signerInfo) throw new ToolInputError('signerType and signerInfo go with a signingRequestId')
      return answered(await calls.action<Submission>(TX, 'SubmitSignedTransaction', { signedTxCbor, buildId }))
    },
  })

  register(server, client, {
    name: 'get_submission_status',
    title: 'Follow a submitted transaction',
    description: 'Where a submitted chain-A transaction stands: submitted (waiting for a block), confirmed (in a block, with its height, hash, time and confirmations) or failed (with the ledger\'s reason). Give submissionId (submit_signed_transaction answered it) or txHash (for a transaction submitted here or already on chain). With waitSeconds it looks again every 2 seconds until the transaction is confirmed or failed or the time is up, sending a progress notification after each look; each look is a metered call (2 units), and a submissionId costs one read (1 unit) more. Once confirmed, get_transaction reads it.',
    input: {
      submissionId: uuid('The submission\'s ID (submit_signed_transaction answered it)').optional(),
      txHash: txHash('The transaction hash (64 hex), instead of or besides submissionId').optional(),
      waitSeconds: z.number().int().min(0).max(300).default(0).describe('How long to wait for it to be confirmed or failed, in seconds (0 to 300): 0 looks once'),
    },
    output: {
      txHash: z.string(),
      status: z.string().describe('submitted, confirmed or failed (pending while being handed to the ledger)'),
      confirmations: z.number().describe('Blocks on top of its block, its own included; 0 until confirmed'),
      blockHeight: z.number().nullable(),
      blockHash: z.string().nullable(),
      blockTime: z.string().nullable(),
      submissionId: z.string().nullable(),
      buildId: z.string().nullable(),
      errorMessage: z.string().nullable().describe('When failed: the ledger\'s reason'),
      looks: z.number().describe('How many times the status was looked at'),
      final: z.boolean().describe('Whether the status is final (confirmed or failed); else call again later'),
    },
    annotations: READS,
    async run({ submissionId, txHash: given, waitSeconds }, calls) {
      const hash = await transactionOf(calls, submissionId, given)
      const deadline = Date.now() + waitSeconds * 1000
      const maxLooks = Math.floor(waitSeconds * 1000 / LOOK_INTERVAL_MS) + 1
      for (let looks = 1; ; looks++) {
        const status = await look(calls, hash)
        const final = FINAL_STATES.includes(status.status)
        const left = deadline - Date.now()
        if (final || left <= 0) return { ...status, looks, final }
        await calls.progress(looks, maxLooks, `look ${looks}: ${status.status}, ${status.confirmations} confirmations; looking again in ${Math.ceil(Math.min(left, LOOK_INTERVAL_MS) / 1000)} s`)
        await pause(Math.min(left, LOOK_INTERVAL_MS), calls.signal)
      }
    },
  })
}

/** The transaction to follow: the submission's (read once), or the hash given; both must agree. */
async function transactionOf(calls: Calls, submissionId: string | undefined, given: string | undefined): Promise<string> {
  if (!submissionId && !given) throw new ToolInputError('give submissionId or txHash')
  if (!submissionId) return given!.toLowerCase()
  const submission = await calls.read<Submission>(TX, `TransactionSubmissions(${submissionId})`, { select: 'ID,txHash' })
  if (given && given.toLowerCase() !== submission.txHash) throw new ToolInputError(`submission ${submissionId} is transaction ${submission.txHash}, not ${given}`)
  return submission.txHash
}

async function pause(ms: number, signal: AbortSignal) {
  try {
    await sleep(ms, undefined, { signal })
  } catch {
    throw new GatewayError(0, 'CANCELLED', 'The wait was cancelled')
  }
}
