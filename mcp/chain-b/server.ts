import { registerAnalytics } from '../analytics.ts'
import { serve } from '../server.ts'
import { registerAnchorTools } from './anchor.ts'
import { registerGrantTools } from './grant.ts'
import { registerJobTools } from './jobs.ts'
import { registerProveTools } from './prove.ts'
import { registerVerifyTools } from './verify.ts'

const INSTRUCTIONS = `Chain B (Midnight) through the chain-access gateway: anchor documents and agent outputs on the attestation vault, prove claims about a document's fields in zero knowledge, share documents, and verify all of it. You hold no chain-B token: the service pays the fees, your key is metered (each answer says units charged and left).

Proving a field without revealing it:
1. prepare_document_proof(document, proofFields): computes the payloadHash, contentRoot, schemaId and, per field, fieldKey, value, scale, salt, siblings, dirs. Records nothing. Keep the answer private (salts and opening reveal the fields).
2. anchor_document(sha256 = payloadHash, document, proofFields, saltSeed = opening.saltSeed): the service computes the content root from the document again and anchors both on the vault.
3. prove_field_predicate (a number against a threshold), prove_field_equality (a text equals a value) or prove_field_membership (a text is one of a set), with fields[i]'s fieldKey, salt as fieldSalt, siblings and dirs: a Groth16 proof, recorded on the vault. Answers an attestationId.
4. verify_attestation(attestationId), verify_predicate(payloadHash, predicate, …) and verify_document(sha256): free, anyone can run them without a key.

Jobs: every write (anchor_document, attest_agent_output, prove_*, grant_disclosure, revoke_disclosure) answers a job at once: queued → running → submitted → confirmed, or failed with an errorCode. A step that needs the previous one confirmed (proving needs the anchor; granting needs the document) must wait: pass waitSeconds (up to 300) to follow the job in the same call (progress notifications as it goes), or call get_job_status(jobId, waitSeconds). Each look at a job costs 1 unit. An idempotencyKey makes a write safe to retry.

Disclosure: grant_disclosure(payloadHash, grantee, role) lets another attester (the grantee's attesterId) read more of your document: public_only, legitimate_interest (content type, size, metadata hash) or authority (storage reference, metadata); revoke_disclosure takes it back.

attest_agent_output anchors an agent's input/output hashes as a canonical envelope whose SHA-256 anyone can check with verify_document. The analytics_* tools describe chain activity.`

await serve({
  name: 'chain-access-chain-b',
  instructions: INSTRUCTIONS,
  register(server, client) {
    registerVerifyTools(server, client)
    registerProveTools(server, client)
    registerAnchorTools(server, client)
    registerGrantTools(server, client)
    registerJobTools(server, client)
    registerAnalytics(server, client, 'chain-b')
  },
})
