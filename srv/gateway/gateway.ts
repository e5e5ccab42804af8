import cds from '@sap/cds'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { GatewayConfig } from './config.ts'
import { refusal, send, UNITS_CHARGED, UNITS_LEFT, withUnitsLeft, type Answer } from './answers.ts'
import { INVALID_KEY, KeyCheck, presentsKey, presentsSecret } from './key-check.ts'
import { Metering, type MeteredCall } from './metering.ts'
import { listenForKeyChanges, type KeyChangeListener } from './key-changes.ts'
import { OWN_BODY_LIMIT, ownRoutes, type OwnRoute } from './own-routes.ts'
import { normaliseTarget } from './paths.ts'
import { activeGrant, keyOnlyPrincipal, keyPrincipal, PUBLIC_PRINCIPAL } from './principals.ts'
import { isProduct } from './keys.ts'
import { CallsInFlight, FailureWindow, InstanceAdmission, KeyRates } from './rate-limits.ts'
import { RouteTable, type Classification } from './routes.ts'
import { RemoteProducts, useRemoteProducts } from './remote-products.ts'
import { refundFailedJob } from './job-refunds.ts'
import { scheduleJob, type ScheduledJob } from '../lib/scheduled-job.ts'
import { requestIdOf } from '../lib/http-safety.ts'
import { readJsonBody } from '../lib/json-body.ts'
import { isApiError } from '../lib/errors.ts'
import { canonicalPath } from '../lib/route-aliases.ts'
import { clientOf } from '../lib/client-address.ts'
import { setRequestDeadline } from '../lib/request-work.ts'

/**
 * The hosted gateway, in front of every route: normalise the path once; classify it; refuse what is
 * closed or unknown (403, nothing charged); answer its own routes; for metered routes check the key,
 * the rate limit and the price, reserve the units, let CAP handle the call as the key's product
 * grant, and resolve the reservation before the answer leaves. Each step lives in a file of its
 * own (paths, routes, key-check, rate-limits, metering, own-routes, answers); this file orders them.
 */

type Request = IncomingMessage & { gatewayPrincipal?: unknown }

const REMOTE_MARGIN_MS = 500
const ENDED_REMOTE_GRANTS_INTERVAL_MS = 60_000
type Next = (error?: unknown) => void

export class Gateway {
  private routes = new RouteTable<OwnRoute>([], ownRoutes())
  private readonly keys: KeyCheck
  private readonly rates: KeyRates
  private readonly inFlight: CallsInFlight
  private readonly admission: InstanceAdmission
  private readonly metering: Metering
  private readonly remotes: RemoteProducts
  private keyChanges?: KeyChangeListener
  private endedRemoteGrants?: ScheduledJob

  constructor(config: GatewayConfig) {
    this.keys = new KeyCheck(new FailureWindow('key', config.authFailures, config.authFailureWindowS))
    this.rates = new KeyRates(config)
    this.inFlight = new CallsInFlight(config.maxCallsInFlight)
    this.admission = new InstanceAdmission(config.maxInstanceCalls)
    this.metering = new Metering(config)
    // A remote answers a little before the gateway's own time-out would cut the call off.
    this.remotes = useRemoteProducts(new RemoteProducts(config.remotes, Math.max(1000, config.timeoutMs - REMOTE_MARGIN_MS), config.remoteGrantSecret, refundFailedJob))
    // A key whose lease saw it change is read again from the database by its next call.
    this.metering.leases.onKeyChanged = keyId => this.keys.forget(keyId)
  }

  /** Builds the route table from what is served and the own routes, loads prices, starts the sweeper, listens for key changes. */
  async start(services: Iterable<cds.Service>) {
    this.routes = RouteTable.fromServices(services, cds.model!.definitions, ownRoutes())
    await this.metering.start()
    if (this.remotes.any()) this.endedRemoteGrants = scheduleJob('revoking ended remote grants', ENDED_REMOTE_GRANTS_INTERVAL_MS, () => this.remotes.revokeEndedGrants())
    if (this.metering.leases.enabled) {
      this.keyChanges = listenForKeyChanges(keyId => {
        this.keys.forget(keyId)
        this.metering.leases.keyChanged(keyId)
      })
    }
  }

  async stop() {
    await this.endedRemoteGrants?.stop()
    await this.keyChanges?.stop()
    return this.metering.stop()
  }

  readonly middleware = (req: Request, res: ServerResponse, next: Next) => {
    this.handle(req, res, next).catch(next)
  }

  private async handle(req: Request, res: ServerResponse, next: Next) {
    // Whatever answers from here on, it charged nothing unless a metered call succeeds.
    res.setHeader(UNITS_CHARGED, 0)
    const target = normaliseTarget(req.url ?? '', req.headers)
    if (!target.ok) return send(res, refusal(target.status, target.code, target.message))
    const path = canonicalPath(target.path)
    req.url = target.query ? `${path}?${target.query}` : path
    const route = this.routes.classify(req.method ?? 'GET', path)
    switch (route.kind) {
      case 'refused':
        return send(res, refusal(route.status, route.code, route.message))
      case 'own':
        return this.own(route.route, new URLSearchParams(target.query), req, res, next)
      case 'free':
        // A remote product's free operations are the remote's; its documents are the model's, answered here.
        if (route.product && !route.document && this.remotes.serves(route.product)) return this.remotes.forwardFree(route.product, req, res)
        req.gatewayPrincipal = PUBLIC_PRINCIPAL
        return next()
      case 'operator':
        // The operator authenticates as CAP's auth says; a key or grant never stands for an operator.
        if (presentsSecret(req)) return send(res, refusal(403, 'OPERATOR_ONLY', 'The operator service takes no API key or agent grant: sign in as an operator'))
        return next()
      case 'metered':
        return this.metered(route, path, req, res, next)
    }
  }

  private async own(route: OwnRoute, query: URLSearchParams, req: Request, res: ServerResponse, next: Next) {
    if (route.access === 'public' && !route.answer) {
      req.gatewayPrincipal = PUBLIC_PRINCIPAL
      return next()
    }
    const body = req.method === 'POST' ? await readJsonBody(req, OWN_BODY_LIMIT) : { ok: true as const, value: undefined }
    if (!body.ok) return send(res, refusal(body.status, body.code, body.message))
    const call = { query, body: body.value, headers: req.headers, client: clientOf(req) }
    if (route.access === 'public') return send(res, await answerOf(() => route.answer!(call)))
    if (route.access === 'key-optional' && !presentsKey(req)) return send(res, await answerOf(() => route.answer(call)))

    const checked = await this.keys.check(req, { fresh: true })
    if (!checked.ok) return send(res, checked.answer)
    const { key } = checked
    const limited = this.rates.take(key)
    if (limited) return send(res, limited)
    const answer = await answerOf(() => route.answer({ ...call, key }))
    if (route.access === 'key' && route.changesKey) this.keys.forget(key.ID)
    // A 401 says the key is not (or no longer) known: it has nothing left to tell.
    send(res, answer.status === 401 || answer.headers?.[UNITS_LEFT] !== undefined ? answer : withUnitsLeft(answer, key.unitsLeft))
  }

  private async metered(route: Extract<Classification, { kind: 'metered' }>, path: string, req: Request, res: ServerResponse, next: Next) {
    const crowded = this.admission.take()
    if (crowded) return send(res, crowded)
    res.once('close', () => this.admission.release())
    const checked = await this.keys.check(req)
    if (!checked.ok) return send(res, checked.answer)
    const call: MeteredCall = { key: checked.key, routeClass: route.routeClass, method: req.method ?? 'GET', path, requestId: requestIdOf(req) }
    const limited = this.rates.take(call.key)
    if (limited) return send(res, limited)
    const units = this.metering.priceOf(call)
    if (typeof units !== 'number') return send(res, units)
    const busy = this.inFlight.take(call.key)
    if (busy) return send(res, busy)
    const key = call.key
    res.once('close', () => this.inFlight.release(key))

    // A key that changed since it was cached (a grant revoked, say) is read again, once.
    for (let attempt = 0; ; attempt++) {
      const grant = isProduct(route.product) ? activeGrant(call.key, route.product) : undefined
      if (!grant && isProduct(route.product)) return send(res, withUnitsLeft(refusal(403, 'PRODUCT_NOT_GRANTED', `This key holds no active grant for ${route.product}`), call.key.unitsLeft))
      const reserved = await this.metering.reserve(call, units)
      if (reserved.ok) {
        this.metering.settleOnAnswer(res, call, reserved)
        setRequestDeadline(Date.now() + this.metering.timeoutMs)
        if (grant && this.remotes.serves(route.product)) return this.remotes.forward(route.product, route, call.key, grant, req, res)
        req.gatewayPrincipal = grant ? keyPrincipal(call.key, grant) : keyOnlyPrincipal(call.key)
        return next()
      }
      this.keys.forget(call.key.ID)
      if (!reserved.stale) return send(res, reserved.answer)
      if (attempt > 0) return send(res, INVALID_KEY)
      const again = await this.keys.check(req, { fresh: true })
      if (!again.ok) return send(res, again.answer)
      call.key = again.key
    }
  }
}

/** A route's answer; an ApiError it throws (bad input, an upstream refusal) is answered with its status and code. */
async function answerOf(answer: () => Promise<Answer>): Promise<Answer> {
  try {
    return await answer()
  } catch (error) {
    if (!isApiError(error)) throw error
    const headers: Record<string, number> = error.retryAfter === undefined ? {} : { 'Retry-After': error.retryAfter }
    return refusal(error.status, error.code, error.message, error.target ? { target: error.target } : {}, headers)
  }
}
