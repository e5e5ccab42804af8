import cds from '@sap/cds'
import {
  anchorDocument, prepareAnchorCommitment, commitDocumentAnchor, verifyDocument, attestAgentOutput, grantDisclosure, revokeDisclosure,
  getJobStatus, getAttesterIdentity, getDocument, prepareDocumentProof, prepareMembershipSet, issueFieldPredicateAttestation,
  issueFieldPredicateAttestationBatch, issueFieldEqualityAttestation, issueFieldMembershipAttestation, issueDocumentIntegrityAttestation,
  issueDocumentDiffAttestation, sponsorAttestation,
} from '#cds-models/ChainBService'
import { ownExpands } from '../lib/ownership.ts'
import * as documents from './documents.ts'
import { attestAgentOutput as attestOutput } from './agent-output.ts'
import * as attestations from './attestations.ts'
import * as documentProofs from './document-proofs.ts'
import { grantDisclosure as grant, revokeDisclosure as revoke } from './disclosure.ts'
import { attesterIdentity } from './identity.ts'
import { JobRunner, type JobFailedEvent } from './jobs/runner.ts'
import { failJobsOfGrant, jobStatus } from './jobs/status.ts'

/**
 * Chain B: every write is queued as a job in the request's transaction and answered at once
 * (`{jobId, status, ...}`); the job runner, started once the services are served, takes it to the
 * chain after the request commits. Reads of the vault go to the chain (503 CHAIN_B_UNAVAILABLE
 * while it does not answer).
 */
export class ChainBService extends cds.ApplicationService {
  runner?: JobRunner

  init() {
    this.runner = new JobRunner(event => this.emit({ event: 'JobFailed', data: event satisfies JobFailedEvent }))
    emitPrivileged(this)
    this.before('READ', '*', ownExpands)

    this.on(anchorDocument, req => this.queued(req, documents.anchorDocument(req)))
    this.on(commitDocumentAnchor, req => this.queued(req, documents.commitDocumentAnchor(req)))
    this.on(attestAgentOutput, req => this.queued(req, attestOutput(req)))
    this.on(grantDisclosure, req => this.queued(req, grant(req)))
    this.on(revokeDisclosure, req => this.queued(req, revoke(req)))
    this.on(issueFieldPredicateAttestation, req => this.queued(req, attestations.issueFieldPredicate(req)))
    this.on(issueFieldEqualityAttestation, req => this.queued(req, attestations.issueFieldEquality(req)))
    this.on(issueFieldMembershipAttestation, req => this.queued(req, attestations.issueFieldMembership(req)))
    this.on(issueDocumentIntegrityAttestation, req => this.queued(req, attestations.issueDocumentIntegrity(req)))
    this.on(issueDocumentDiffAttestation, req => this.queued(req, attestations.issueDocumentDiff(req)))
    this.on(issueFieldPredicateAttestationBatch, req => this.queued(req, attestations.issueBatch(req)))
    this.on(sponsorAttestation, req => this.queued(req, attestations.sponsorAttestation(req)))
    this.on(prepareDocumentProof, req => documentProofs.prepareDocumentProof(req.data))
    this.on(prepareMembershipSet, req => documentProofs.prepareMembershipSet(req.data))
    this.on(prepareAnchorCommitment, req => documents.prepareAnchorCommitment(req.data))
    this.on(verifyDocument, req => documents.verifyDocument(req.data))
    this.on(getDocument, req => documents.getDocument(req))
    this.on(getJobStatus, req => jobStatus(req.data.jobId!))
    this.on(getAttesterIdentity, () => attesterIdentity())
    this.on('GrantRevoked', (msg: { data: { grantId: string } }) => failJobsOfGrant(this.runner!, msg.data.grantId))

    cds.once('served', () => this.runner!.start())
    return super.init()
  }

  /** The runner looks for the job as soon as the request that queued it has committed. */
  private async queued<T>(req: cds.Request, accepted: Promise<T>): Promise<T> {
    const answer = await accepted
    req.on('succeeded', () => this.runner?.kick())
    return answer
  }
}

/**
 * The service's own events (JobFailed to the gateway, GrantRevoked from it) are messages between
 * parts of the server, not calls of the current user: they pass as the privileged user, in
 * whoever's request (or none) they are emitted, so the service's @requires does not refuse them.
 */
function emitPrivileged(srv: cds.Service) {
  const emit = srv.emit.bind(srv) as (...args: unknown[]) => Promise<unknown>
  const own = new Set(['JobFailed', 'GrantRevoked'])
  Object.assign(srv, {
    emit: (...args: unknown[]) => {
      const first = args[0] as string | { event?: string }
      const event = typeof first === 'string' ? first : first?.event
      return own.has(event ?? '') ? cds.tx({ user: cds.User.privileged }, () => emit(...args)) : emit(...args)
    },
  })
}

export default ChainBService
