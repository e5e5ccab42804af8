import cds from '@sap/cds'
import { verifyAttestation, verifyAttestationState, verifyDocument, verifyPredicateState, verifyProof } from '#cds-models/ChainBVerifyService'
import { ApiError } from '../lib/errors.ts'
import { TokenBuckets } from '../lib/token-buckets.ts'
import { verifySettings } from './settings.ts'
import * as verdicts from './verdicts.ts'
import { clientOf, proxyTrust, type ClientRequest } from '../lib/client-address.ts'

/**
 * The verify lane (free, no key). Reads run as the privileged user: a verification may look at
 * any caller's attestation, and it answers only what the chain makes public anyway (claims,
 * proofs, public signals, where they were recorded).
 */
export class ChainBVerifyService extends cds.ApplicationService {
  private readonly buckets = new TokenBuckets()

  init() {
    verifySettings() // a bad setting stops the start, not a later verification
    proxyTrust()
    this.before('*', req => this.limitRate(req))
    const privileged = <T>(work: () => Promise<T>) => cds.tx({ user: cds.User.privileged }, work)
    this.on(verifyAttestation, req => privileged(() => verdicts.verifyAttestation(req.data)))
    this.on(verifyAttestationState, req => verdicts.verifyAttestationState(req.data))
    this.on(verifyPredicateState, req => verdicts.verifyPredicateState(req.data))
    this.on(verifyDocument, req => verdicts.verifyDocument(req.data))
    this.on(verifyProof, req => verdicts.verifyProof(req.data))
    return super.init()
  }

  /** A token bucket per client address: 429 RATE_LIMITED with Retry-After once it is empty. */
  private limitRate(req: cds.Request) {
    const http = (req as cds.Request & { http?: { req?: ClientRequest; res?: { setHeader(name: string, value: string): void } } }).http
    if (!http?.req) return
    const { ratePerSecond, burst } = verifySettings()
    const taken = this.buckets.take(clientOf(http.req), ratePerSecond, burst)
    if (taken.ok) return
    http.res?.setHeader('Retry-After', String(taken.retryAfterS))
    throw new ApiError(429, 'RATE_LIMITED', `Too many verifications from this address; retry after ${taken.retryAfterS} s`, { retryAfter: taken.retryAfterS })
  }
}

export default ChainBVerifyService
