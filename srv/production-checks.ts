import { chainAProductionProblems } from './chains/chain-a/config.ts'
import { chainBProductionProblems } from './chains/chain-b/config.ts'
import { laneProductionProblems } from './key-lanes/config.ts'
import { databaseProductionProblems } from './lib/production-database.ts'
import { metricsProductionProblems } from './metrics/config.ts'
import { gatewayProductionProblems } from './gateway/config.ts'
import { refuseToStartOnProblems, type ProductionCheck } from './lib/production-settings.ts'

/**
 * Every owner's check of its production settings (docs/configuration.md, Production), run by the
 * bootstrap before anything is served: in production one message names every problem and the
 * process ends (lib/production-settings.ts).
 */
export const PRODUCTION_CHECKS: readonly ProductionCheck[] = [
  databaseProductionProblems,
  () => chainAProductionProblems(),
  () => chainBProductionProblems(),
  laneProductionProblems,
  metricsProductionProblems,
  gatewayProductionProblems,
]

export const refuseToStartWithProductionProblems = () => refuseToStartOnProblems(PRODUCTION_CHECKS)
