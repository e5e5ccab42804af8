import type { Router } from 'express'
import { parseDrepId, parsePoolId } from '../addresses.ts'
import type { Ledger } from '../ledger.ts'
import { badRequest, found, paginate, paging } from './http.ts'
import { drepDelegators, drepJson, drepListJson, poolExtendedJson, poolJson, poolMetadataJson } from './present.ts'

/** Stake pools and DReps. */
export function stakingRoutes(router: Router, ledger: Ledger) {
  const pool = (value: string) => {
    const hex = parsePoolId(value)
    if (!hex) throw badRequest('Invalid or malformed pool id.')
    return found(ledger.pools.get(hex))
  }

  router.get('/pools', (req, res) => { res.json(paginate([...ledger.pools.values()], paging(req)).map(p => p.id)) })
  router.get('/pools/extended', (req, res) => {
    const live = ledger.liveStake()
    res.json(paginate([...ledger.pools.values()], paging(req)).map(p => poolExtendedJson(ledger, p, live)))
  })
  router.get('/pools/:pool', (req, res) => { res.json(poolJson(ledger, pool(req.params.pool))) })
  router.get('/pools/:pool/metadata', (req, res) => { res.json(poolMetadataJson(pool(req.params.pool))) })
  router.get('/pools/:pool/delegators', (req, res) => {
    const { hex } = pool(req.params.pool)
    const delegators = [...ledger.liveStake().accounts].filter(([, delegation]) => delegation.pool === hex)
    res.json(paginate(delegators, paging(req)).map(([address, { amount }]) => ({ address, live_stake: String(amount) })))
  })
  router.get('/pools/:pool/blocks', (req, res) => { res.json(paginate(pool(req.params.pool).blocks, paging(req))) })

  const drep = (value: string) => {
    const hex = parseDrepId(value)
    if (!hex) throw badRequest('Invalid or malformed DRep id.')
    return found(ledger.dreps.get(hex))
  }

  router.get('/governance/dreps', (req, res) => {
    res.json(paginate([...ledger.dreps.values()], paging(req)).map(d => drepListJson(ledger, d)))
  })
  router.get('/governance/dreps/:drep', (req, res) => { res.json(drepJson(ledger, drep(req.params.drep))) })
  router.get('/governance/dreps/:drep/delegators', (req, res) => {
    res.json(paginate(drepDelegators(ledger, drep(req.params.drep)), paging(req)).map(account => ({
      address: account.stakeAddress, amount: String(ledger.controlledStake(account.stakeAddress)),
    })))
  })
}
