import cds from '@sap/cds'

/**
 * The moment a request (or a job's run) judges expiry by: its context's timestamp, the same `$now`
 * the services' views compute a build's or a signing request's status with, so a read and a
 * guarded write in one request never disagree about whether something has expired.
 */
export const now = () => (cds.context?.timestamp ?? new Date()).toISOString()
