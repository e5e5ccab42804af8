import cds from '@sap/cds'
import type { Application } from 'express'
import type { Server } from 'node:http'
import { answerClientErrors, answerTheRest, assignRequestId, keepConnectionsLongerThanClients, keepServingOnUncaughtErrors, refuseHostileTargets } from '../../srv/lib/http-safety.ts'
import { tieWorkToAnswer } from '../../srv/lib/request-work.ts'
import { logAccess } from '../../srv/lib/access-log.ts'
import { refuseWhileStopping } from '../../srv/lib/graceful-stop.ts'
import { followRouteAliases } from '../../srv/lib/route-aliases.ts'
import { boundAnswerSize } from '../../srv/lib/answer-size.ts'
import { limitStatementsToRequestDeadline } from '../../srv/lib/statement-deadline.ts'
import { checkCollationsOnce, replaceBrokenConnections } from '../../srv/lib/database-connections.ts'
import { guardServiceEntry } from '../../srv/lib/service-entry.ts'
import { checkInput } from '../../srv/lib/input-guard.ts'
import { stableErrorCodes } from '../../srv/lib/error-codes.ts'
import { checkGrant } from '../../srv/gateway/grant-policy.ts'
import { installGateway } from '../../srv/gateway/index.ts'
import { installKeyLanes } from '../../srv/key-lanes/index.ts'
import { gatewayConfig, rememberListeningPort } from '../../srv/gateway/config.ts'
import { serveZkConfig } from '../../srv/zk-config/index.ts'
import { serveFrontEnds } from '../../srv/front-ends/index.ts'
import { refuseToStartWithProductionProblems } from '../../srv/production-checks.ts'
import { refuseDisabledChains } from '../../srv/chains/disabled-chains.ts'
import { serveMcpPackage } from '../../srv/mcp-package/index.ts'
import { serveMetrics } from '../../srv/metrics/index.ts'
import { measureRequests } from '../../srv/metrics/requests.ts'
import { checkHealthSettings, serveLiveness, serveReadiness } from '../../srv/health/index.ts'

/**
 * A request's way through the server, each step in the order it runs. Configuration is read from
 * `cds.requires` (the gateway's under `cds.requires.gateway`) and the documented variables.
 */
export function installRequestPipeline() {
  // 0. In production, every setting is checked before anything is set up: one message names every problem.
  refuseToStartWithProductionProblems()
  // Refusals before the hosted gateway's metering say that they charged nothing.
  const uncharged: Record<string, number> = gatewayConfig().enabled ? { 'x-access-units-charged': 0 } : {}

  // 1. Every request, first of all: its access line, written once it is answered, whatever answers it (docs/operations.md),
  //    and its count and time by route family and status class (srv/metrics/).
  onBootstrap(app => app.use(logAccess, measureRequests))
  //    Then an id, refused once the process stops (else counted in flight), its work tied to its answer,
  //    hostile targets refused, /api/v1 spellings followed.
  onBootstrap(app => app.use(assignRequestId, refuseWhileStopping(uncharged), tieWorkToAnswer, refuseHostileTargets(uncharged), followRouteAliases))
  //    A chain turned off answers its routes 503 CHAIN_A_DISABLED / CHAIN_B_DISABLED, uncharged.
  //    A chain the hosted gateway forwards to a remote instance is that instance's to answer.
  const gateway = gatewayConfig()
  const remoteChains = gateway.enabled ? (['A', 'B'] as const).filter(chain => gateway.remotes[chain === 'A' ? 'chain-a' : 'chain-b']) : []
  const disabledChains = refuseDisabledChains(uncharged, remoteChains)
  if (disabledChains) onBootstrap(app => app.use(disabledChains))
  // 2. The hosted gateway (when enabled): path, route gating, key, rate, units reserved; settled on the answer.
  if (installGateway()) cds.log('gateway').info('hosted gateway on: API keys, metering and route gating in front of every route')
  //    Among its own routes: the key lanes (buy, sign in, redeem).
  installKeyLanes()
  // 3. Answers too large are refused (after the gateway, so its refund sees the refusal).
  onBootstrap(app => app.use(['/odata', '/api'], boundAnswerSize))
  // 4. The routes that are no service: the probes (before CAP's stub /health), the prover keys, the
  //    metrics (for the METRICS_TOKEN only), the MCP tool servers' package and the front ends.
  checkHealthSettings()
  onBootstrap(app => app.use('/health', serveLiveness))
  onBootstrap(app => app.use('/ready', serveReadiness))
  onBootstrap(app => app.use('/zk-config', serveZkConfig))
  onBootstrap(app => app.use('/metrics', serveMetrics))
  onBootstrap(app => app.use('/mcp', serveMcpPackage))
  onBootstrap(serveFrontEnds)
  // 5. CAP: authentication (cds.requires.auth), the OData adapter, then, as a request enters a
  //    service, its input and the grant's permission (srv/lib/service-entry.ts says why there).
  cds.on('served', services => guardServiceEntry(Object.values(services), [checkInput, checkGrant]))
  // 6. Its database statements end at its deadline; connections the database cut are replaced (PostgreSQL).
  limitStatementsOnceConnected()
  // 7. Errors get stable codes before CAP's own error middleware answers them.
  answerErrorsWithStableCodes()
  // 8. Once listening: idle connections kept longer than clients keep them; what the HTTP parser
  //    refuses and what no route answers is answered as JSON; nothing that escapes a handler ends the process.
  cds.on('listening', ({ server }: { server: Server }) => {
    const address = server.address()
    rememberListeningPort(typeof address === 'object' ? address?.port : undefined)
    keepConnectionsLongerThanClients(server)
    answerClientErrors(server, uncharged)
    answerTheRest(cds.app)
    // Until it listens, a failure to start ends the process as usual; jest runs its own handlers.
    if (typeof (globalThis as { test?: unknown }).test !== 'function') keepServingOnUncaughtErrors()
  })
}

/** The pipeline's steps, each a listener of its own (more than Node's default 10 of one event). */
function onBootstrap(step: (app: Application) => unknown) {
  const events = cds as unknown as { getMaxListeners(): number; setMaxListeners(n: number): void }
  if (events.getMaxListeners() < 32) events.setMaxListeners(32)
  cds.on('bootstrap', step)
}

function limitStatementsOnceConnected() {
  const prepare = (db: cds.Service) => {
    limitStatementsToRequestDeadline(db)
    replaceBrokenConnections(db)
    checkCollationsOnce(db)
  }
  if (cds.db) return prepare(cds.db)
  cds.on('connect', (service: cds.Service) => {
    if (service.name === 'db') prepare(service)
  })
}

/**
 * The second place that changes a framework structure, and why: CAP's protocol adapters answer
 * errors with the middlewares in `cds.middlewares.after` (its errors middleware), which offers no
 * hook of its own; ours goes first so that framework errors (URL parsing, unknown properties,
 * read-only entities), which carry only an HTTP status, leave with a stable code. Pinned by
 * test/lib/cap-seams.test.ts.
 */
function answerErrorsWithStableCodes() {
  const after = (cds.middlewares as unknown as { after: unknown[] }).after
  if (!after.includes(stableErrorCodes)) after.unshift(stableErrorCodes)
}
