import cds from '@sap/cds'
import type { Application } from 'express'
import { gatewayConfig } from './config.ts'
import { Gateway } from './gateway.ts'
import { refundFailedJob } from './job-refunds.ts'
import { startHeartbeat } from './instances.ts'
import { proxyTrust } from '../lib/client-address.ts'
import { onStop } from '../lib/graceful-stop.ts'

/**
 * Puts the hosted gateway in front of every route when it is enabled (development and the hosted
 * deployment; not self-hosted). The products check grant principals in every profile (grant-policy.ts).
 */
export function installGateway(): Gateway | undefined {
  proxyTrust() // a malformed trusted-proxy setting stops the start
  shareLimitsAcrossInstances()
  const config = gatewayConfig()
  if (!config.enabled) return undefined
  const gateway = new Gateway(config)
  cds.on('bootstrap', (app: Application) => {
    // Routing must see the path exactly as the gateway classified it.
    app.set('case sensitive routing', true)
    app.set('strict routing', true)
    app.use(gateway.middleware)
  })
  cds.on('served', services => gateway.start(Object.values(services)))
  cds.on('served', services => refundFailedWork(Object.values(services)))
  onStop(() => gateway.stop())
  return gateway
}

/**
 * The limits every instance enforces (the gateway's, the key lanes', the verify lane's, which is
 * served self-hosted too) are shared by the instances serving: each one counts them from its start.
 */
function shareLimitsAcrossInstances() {
  let heartbeat: Promise<{ stop(): Promise<void> }> | undefined
  cds.on('served', () => (heartbeat = startHeartbeat()))
  cds.on('shutdown', async () => (await heartbeat)?.stop())
}

/** What a service says when a job it accepted failed for a reason that was not the caller's. */
interface JobFailed {
  jobId: string
  requestId?: string | null
  errorCode?: string | null
}

/**
 * A write that queues a job is charged when the job is accepted; should the job fail later for a
 * reason that was not the caller's, the service emits the event it names in `@gateway.refundOn`,
 * and the charge of the request that queued the job is refunded, once.
 */
function refundFailedWork(services: cds.Service[]) {
  for (const service of services) {
    const event = (cds.model?.definitions[service.name] as { '@gateway.refundOn'?: string } | undefined)?.['@gateway.refundOn']
    if (!event) continue
    service.on(event, async (msg: { data: JobFailed }) => {
      const { jobId, requestId, errorCode } = msg.data
      if (!requestId) return
      const refunded = await refundFailedJob(requestId, `job ${errorCode ?? 'failed'}`)
      if (refunded !== undefined) cds.log('gateway').info(`refunded the charge of job ${jobId} (${errorCode})`)
    })
  }
}
