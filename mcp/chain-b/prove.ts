import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import type { GatewayClient } from '../gateway-client.ts'
import { CREATES, register, ToolInputError } from '../tools.ts'
import { accepted, followedJob, hex64, idempotencyKey, SERVICE, waitSeconds } from './jobs.ts'

/**
 * The prove tools: a zero-knowledge claim about a field of an anchored document, proven (Groth16)
 * by a job and recorded on the vault. The witness (value, salt, path) comes from
 * prepare_document_proof's fields[i]; the paths are taken as arrays and sent as the …Json texts
 * the service wants.
 */

const CONTENT_DEPTH = 4
const SET_DEPTH = 6

const PROVES = 'A job proves it (Groth16, a few seconds) and records it on the vault: 50 units when accepted (a refusal is not charged: 422 CLAIM_FALSE when the claim does not hold, 400 WITNESS_MISMATCH when the inputs do not lead to the anchored content root, 409 DOCUMENT_NOT_ANCHORED or ALREADY_PROVEN). Not idempotent: each call proves and charges again, unless it repeats an idempotencyKey. With waitSeconds it follows the job; once confirmed, verify_attestation with the attestationId (free).'

const witness = {
  payloadHash: hex64('The document\'s payload hash (64 hex): prepare_document_proof\'s payloadHash, anchored by anchor_document with its contentRoot and schemaId'),
  fieldKey: z.string().min(1).max(256).describe('prepare_document_proof\'s fields[i].fieldKey (64 hex), or the field\'s path as given there (e.g. total, buyer.country)'),
  fieldSalt: hex64('prepare_document_proof\'s fields[i].salt (64 hex)'),
  siblings: z.array(hex64('A sibling node (64 hex)')).length(CONTENT_DEPTH).describe('prepare_document_proof\'s fields[i].siblings: the 4 sibling nodes (64 hex each) of the field\'s path, from the leaf up'),
  dirs: z.array(z.boolean()).length(CONTENT_DEPTH).describe('prepare_document_proof\'s fields[i].dirs: 4 booleans, true where the node at that level is the left child'),
  contentRoot: hex64('Optional check: the content root (64 hex) the document must be anchored with').optional(),
  idempotencyKey,
  waitSeconds,
}

const proofAccepted = {
  jobId: z.string().describe('The job that proves and records the claim: get_job_status'),
  status: z.string().describe('queued when accepted'),
  attestationId: z.string().describe('The attestation: verify_attestation once the job is confirmed'),
  job: followedJob,
}

/** The common witness parameters as the service names them: the path as JSON texts. */
function witnessParameters<T extends { siblings: string[]; dirs: boolean[] }>({ siblings, dirs, ...rest }: T) {
  return { ...rest, siblingsJson: JSON.stringify(siblings), dirsJson: JSON.stringify(dirs) }
}

/** Registers prove_field_predicate, prove_field_equality and prove_field_membership. */
export function registerProveTools(server: McpServer, client: GatewayClient) {
  register(server, client, {
    name: 'prove_field_predicate',
    title: 'Prove a field compares to a threshold',
    description: `Proves in zero knowledge that a number field of an anchored document is lessOrEqual, greaterOrEqual, lessThan or greaterThan a threshold, without revealing it. Inputs from prepare_document_proof's fields[i] for that field: fieldKey, salt (as fieldSalt), siblings, dirs, value and scale. ${PROVES}`,
    input: {
      ...witness,
      value: z.union([z.string(), z.number()]).describe('The field\'s value as prepare_document_proof\'s fields[i].value (e.g. 1234.5), in the field\'s units; stays hidden'),
      scale: z.string().regex(/^\d{1,19}$/).optional().describe('prepare_document_proof\'s fields[i].scale (integer text; default 1000)'),
      predicate: z.enum(['lessOrEqual', 'greaterOrEqual', 'lessThan', 'greaterThan']).describe('How the value compares to the threshold'),
      threshold: z.union([z.string().regex(/^\d+(\.\d+)?$/, 'a decimal number such as 1000 or 12.5'), z.number().nonnegative()]).describe('The threshold in the field\'s units (e.g. 1000); public, with at most as many decimals as the scale allows'),
      unit: z.string().max(40).optional().describe('A unit recorded with the claim for readers, e.g. EUR'),
    },
    output: proofAccepted,
    annotations: CREATES,
    async run({ value, threshold, waitSeconds, ...rest }, calls) {
      const answer = await calls.action<{ jobId: string; status: string }>(SERVICE, 'issueFieldPredicateAttestation', {
        ...witnessParameters(rest), value: String(value), threshold: String(threshold),
      })
      return await accepted(calls, answer, waitSeconds)
    },
  })

  register(server, client, {
    name: 'prove_field_equality',
    title: 'Prove a field holds a text',
    description: `Proves in zero knowledge that a text field of an anchored document holds expectedValue (or the text whose SHA-256 is expectedDigest); the digest becomes public, so a guessable text can be guessed. Inputs from prepare_document_proof's fields[i]: fieldKey, salt (as fieldSalt), siblings, dirs. Give expectedValue or expectedDigest. ${PROVES}`,
    input: {
      ...witness,
      expectedValue: z.string().optional().describe('The text the field holds, e.g. EUR'),
      expectedDigest: hex64('Instead of expectedValue: the SHA-256 of the text (64 hex), prepare_document_proof\'s fields[i].valueDigest').optional(),
    },
    output: proofAccepted,
    annotations: CREATES,
    async run({ waitSeconds, ...rest }, calls) {
      if ((rest.expectedValue === undefined) === (rest.expectedDigest === undefined)) throw new ToolInputError('give exactly one of expectedValue and expectedDigest')
      const answer = await calls.action<{ jobId: string; status: string }>(SERVICE, 'issueFieldEqualityAttestation', witnessParameters(rest))
      return await accepted(calls, answer, waitSeconds)
    },
  })

  register(server, client, {
    name: 'prove_field_membership',
    title: 'Prove a field is one of a set',
    description: `Proves in zero knowledge that a text field of an anchored document is one of a set of texts, without revealing which (the set's root is public). Give the set as allowedValues (up to 64 texts), or as setRoot with the value's setSiblings and setDirs; and the field's text as value (or its SHA-256 as valueDigest). Inputs from prepare_document_proof's fields[i]: fieldKey, salt (as fieldSalt), siblings, dirs. ${PROVES}`,
    input: {
      ...witness,
      value: z.string().optional().describe('The text the field holds (e.g. DE); stays hidden'),
      valueDigest: hex64('Instead of value: its SHA-256 (64 hex), prepare_document_proof\'s fields[i].valueDigest').optional(),
      allowedValues: z.array(z.string()).min(1).max(64).optional().describe('The set: 1 to 64 texts, e.g. ["FR","DE","IT"]'),
      setRoot: hex64('Instead of allowedValues: the set\'s root (64 hex)').optional(),
      setSiblings: z.array(hex64('A sibling node (64 hex)')).length(SET_DEPTH).optional().describe('With setRoot: the value\'s path in the set, 6 sibling nodes (64 hex each), from the leaf up'),
      setDirs: z.array(z.boolean()).length(SET_DEPTH).optional().describe('With setRoot: 6 booleans, true where the node at that level is the left child'),
    },
    output: proofAccepted,
    annotations: CREATES,
    async run({ waitSeconds, allowedValues, setSiblings, setDirs, ...rest }, calls) {
      if ((rest.value === undefined) === (rest.valueDigest === undefined)) throw new ToolInputError('give exactly one of value and valueDigest')
      const setParts = [rest.setRoot, setSiblings, setDirs].filter(part => part !== undefined).length
      if (allowedValues ? setParts > 0 : setParts < 3) throw new ToolInputError('give the set as allowedValues, or as setRoot with setSiblings and setDirs (not both)')
      const answer = await calls.action<{ jobId: string; status: string }>(SERVICE, 'issueFieldMembershipAttestation', {
        ...witnessParameters(rest),
        allowedValuesJson: allowedValues && JSON.stringify(allowedValues),
        setSiblingsJson: setSiblings && JSON.stringify(setSiblings),
        setDirsJson: setDirs && JSON.stringify(setDirs),
      })
      return await accepted(calls, answer, waitSeconds)
    },
  })
}
