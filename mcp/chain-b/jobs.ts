import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { setTimeout as sleep } from 'node:timers/promises'
import { z } from 'zod'
import { GatewayError, type GatewayClient } from '../gateway-client.ts'
import { READS, register, type Calls } from '../tools.ts'

/**
 * Chain-B jobs: every write answers a job at once, and the job takes it to the chain (queued →
 * running → submitted → confirmed, or failed). The tools that queue one can follow it for a while
 * (waitSeconds), looking with getJobStatus and telling the client how it goes. Also the argument
 * shapes the chain-B tools share.
 */

export const SERVICE = 'chainb'

interface JobStatus {
  jobId: string
  status: string
  [name: string]: unknown
}

const FINAL = ['confirmed', 'failed']
/** A look a second while a job usually finishes, then one every two seconds (each look is metered). */
const QUICK_LOOKS = 10
const QUICK_MS = 1000
const SLOW_MS = 2000

/** 64 hex characters (a SHA-256 digest, an attester id, a BN254 field element as prepare_document_proof answers it). */
export const hex64 = (what: string) => z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters').describe(what)

const jobId = z.guid().describe('The job id (UUID) a chain-B write answered as jobId')

export const waitSeconds = z.number().int().min(0).max(300).default(0)
  .describe('Seconds (0 to 300) to follow the job before answering: 0 answers at once with the queued job; more looks at it about every 1 to 2 s (getJobStatus, 1 unit a look) until it is confirmed or failed or the time is up, with MCP progress notifications when the request carries a progress token')

export const idempotencyKey = z.string().regex(/^[\x21-\x7e]{1,128}$/, '1 to 128 printable ASCII characters without spaces').optional()
  .describe('1 to 128 printable ASCII characters without spaces. The same key with the same arguments answers the same job again, not charged twice (safe to retry); with other arguments it is refused (409 IDEMPOTENCY_KEY_REUSED)')

const nullableText = z.string().nullable().optional()

const jobShape = {
  jobId: z.string(),
  kind: z.string().optional().describe('anchorDocument, attestAgentOutput, grantDisclosure, revokeDisclosure, proveAttestation…'),
  status: z.string().describe('queued, running, submitted, confirmed (final: on chain, deep enough) or failed (final: see errorCode)'),
  result: z.unknown().optional().describe('What the job made, once confirmed (JSON)'),
  errorCode: nullableText,
  errorMessage: nullableText,
  txHash: nullableText.describe('The chain-B transaction, once submitted'),
  blockHeight: z.number().nullable().optional().describe('The block that holds it, once in one'),
}

export const followedJob = z.looseObject(jobShape).optional()
  .describe('Only with waitSeconds: the job as last seen (confirmed, failed, or still on its way when the time ran out; then call get_job_status)')

const settled = (job: JobStatus) => FINAL.includes(job.status)

/** The job as getJobStatus answers it, its result (JSON text) parsed. */
async function lookAt(calls: Calls, id: string): Promise<JobStatus> {
  const job = await calls.action<JobStatus>(SERVICE, 'getJobStatus', { jobId: id })
  if (typeof job.result !== 'string') return job
  try {
    return { ...job, result: JSON.parse(job.result) }
  } catch {
    return job
  }
}

function said(job: JobStatus): string {
  const where = job.txHash ? ` (tx ${String(job.txHash)}${job.blockHeight ? ` in block ${String(job.blockHeight)}` : ''})` : ''
  const why = job.errorCode ? `: ${String(job.errorCode)} ${String(job.errorMessage ?? '')}`.trimEnd() : ''
  return `${job.status}${where}${why}`
}

async function pause(ms: number, signal: AbortSignal) {
  try {
    await sleep(ms, undefined, { signal })
  } catch {
    throw new GatewayError(0, 'CANCELLED', 'The call was cancelled while it followed the job')
  }
}

/**
 * Follows a job for up to `seconds`, with a progress notification per look, and answers it as last
 * seen. `queued`: the status the write just answered, so the first look waits a moment.
 */
async function followJob(calls: Calls, id: string, seconds: number, queued?: string): Promise<JobStatus> {
  const started = Date.now()
  const deadline = started + seconds * 1000
  let job = queued === undefined ? await lookAt(calls, id) : undefined
  await calls.progress(0, seconds, said(job ?? { jobId: id, status: String(queued) }))
  for (let looks = 0; !job || (!settled(job) && Date.now() < deadline); looks++) {
    await pause(Math.min(looks < QUICK_LOOKS ? QUICK_MS : SLOW_MS, Math.max(0, deadline - Date.now())), calls.signal)
    job = await lookAt(calls, id)
    await calls.progress(Math.min(seconds, (Date.now() - started) / 1000), seconds, said(job))
  }
  return job
}

/** A write's acceptance, and with waitSeconds the job followed from it (a replayed job already final is looked at once). */
export async function accepted<T extends { jobId: string; status: string }>(calls: Calls, answer: T, seconds: number) {
  if (seconds <= 0) return answer
  return { ...answer, job: await followJob(calls, answer.jobId, seconds, FINAL.includes(answer.status) ? undefined : answer.status) }
}

/** Registers get_job_status. */
export function registerJobTools(server: McpServer, client: GatewayClient) {
  register(server, client, {
    name: 'get_job_status',
    title: 'Chain-B job status',
    description: 'How a chain-B job stands (anchor_document, attest_agent_output, prove_*, grant_disclosure and revoke_disclosure each answer one): queued → running (proving, for prove_*) → submitted (txHash) → confirmed (blockHeight; final) or failed (errorCode, errorMessage; final, a failure that was not the caller\'s is refunded). `result` is what the job made. 1 unit a look; with waitSeconds it keeps looking until the job is final. Another key\'s job answers 404 like an unknown one.',
    input: { jobId, waitSeconds },
    output: { ...jobShape, attempt: z.number().optional(), maxAttempts: z.number().optional() },
    annotations: READS,
    async run({ jobId, waitSeconds }, calls) {
      return waitSeconds > 0 ? await followJob(calls, jobId, waitSeconds) : await lookAt(calls, jobId)
    },
  })
}
