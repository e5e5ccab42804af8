import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import type { GatewayClient } from '../gateway-client.ts'
import { register, ToolInputError } from '../tools.ts'
import { accepted, followedJob, hex64, idempotencyKey, SERVICE, waitSeconds } from './jobs.ts'

/**
 * The grant tools: disclosure of an anchored document to another attester, recorded on the vault
 * and enforced when the grantee reads the document (getDocument).
 */

const ROLES = ['public_only', 'legitimate_interest', 'authority'] as const

type Accepted = { jobId: string; status: string }

const payloadHash = hex64('The payload hash (64 hex) of a document you anchored, confirmed (anchor_document\'s sha256)')
const grantee = hex64('The grantee\'s attester id (64 hex): what the grantee\'s own key answers as attesterId (chainb getAttesterIdentity)')

const disclosureAccepted = {
  jobId: z.string().describe('The job that records it on the vault: get_job_status'),
  status: z.string().describe('queued when accepted'),
  disclosureGrantId: z.string().nullable().describe('The grant'),
  job: followedJob,
}

/** Registers grant_disclosure and revoke_disclosure (get_job_status, the group's third, is in jobs.ts). */
export function registerGrantTools(server: McpServer, client: GatewayClient) {
  register(server, client, {
    name: 'grant_disclosure',
    title: 'Grant disclosure of a document',
    description: 'Lets another attester (the grantee) read more of a document you anchored, recorded on the vault (10 units; a job). Levels: public_only (0: payload hash, attester, transaction, height, time; what anyone sees), legitimate_interest (1: also content type, size, metadata hash), authority (2: also storage reference and metadata). Granting again replaces the level. The document must be confirmed (409 DOCUMENT_NOT_ANCHORED otherwise). Give role or level. With waitSeconds it follows the job; revoke_disclosure takes it back.',
    input: {
      payloadHash,
      grantee,
      role: z.enum(ROLES).optional().describe('The level by name: public_only, legitimate_interest or authority'),
      level: z.number().int().min(0).max(2).optional().describe('The level by number: 0 public_only, 1 legitimate_interest, 2 authority (must agree with role when both are given)'),
      idempotencyKey,
      waitSeconds,
    },
    output: disclosureAccepted,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    async run({ waitSeconds, ...rest }, calls) {
      if (rest.role === undefined && rest.level === undefined) throw new ToolInputError('give the level to grant: role (public_only, legitimate_interest, authority) or level (0, 1, 2)')
      const answer = await calls.action<Accepted>(SERVICE, 'grantDisclosure', rest)
      return await accepted(calls, answer, waitSeconds)
    },
  })

  register(server, client, {
    name: 'revoke_disclosure',
    title: 'Revoke disclosure of a document',
    description: 'Takes back the grantee\'s disclosure grant on a document you anchored: once the job is confirmed the grantee sees only public_only again (10 units; a job). Needs an active grant (404 DISCLOSURE_GRANT_NOT_FOUND otherwise). With waitSeconds it follows the job.',
    input: { payloadHash, grantee, idempotencyKey, waitSeconds },
    output: disclosureAccepted,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    async run({ waitSeconds, ...rest }, calls) {
      const answer = await calls.action<Accepted>(SERVICE, 'revokeDisclosure', rest)
      return await accepted(calls, answer, waitSeconds)
    },
  })
}
