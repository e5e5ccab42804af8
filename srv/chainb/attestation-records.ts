import { InternalService } from '../lib/internal-service.ts'

/** The attestations' records for the verify lane (attestation-records.cds): read-only projections, whole. */
export class ChainBAttestationRecords extends InternalService {}
