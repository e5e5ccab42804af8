import cds from '@sap/cds'

/**
 * What must outlast a failed request (a policy refusal, a ledger rejection, an expiry found on the
 * way): once the request's own changes are rolled back, `work` runs in a transaction of its own.
 */
export function afterRollback(req: cds.Request, work: (error: unknown) => Promise<unknown>) {
  failureOf(req).on('failed', async (error: unknown) => {
    try {
      await cds.tx(() => work(error))
    } catch (failure) {
      cds.log('chaina-sign').error('could not record after the rollback of', req.event, failure)
    }
  })
}

/** A request's `failed` event (emitted after the rollback), which cds-types do not declare. */
const failureOf = (req: cds.Request) => req as unknown as { on(event: 'failed', listener: (error: unknown) => Promise<void>): void }
