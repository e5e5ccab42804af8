/**
 * Protocol parameters of the devnet: the Conway-era values of the preprod network, so fees,
 * deposits and minimum UTxO values computed against the devnet match the public testnet.
 */

export interface ProtocolParameters {
  minFeeA: number
  minFeeB: number
  maxBlockSize: number
  maxTxSize: number
  maxBlockHeaderSize: number
  keyDeposit: bigint
  poolDeposit: bigint
  eMax: number
  nOpt: number
  a0: number
  rho: number
  tau: number
  protocolMajorVer: number
  protocolMinorVer: number
  minPoolCost: bigint
  coinsPerUtxoByte: bigint
  priceMem: number
  priceStep: number
  maxTxExMem: bigint
  maxTxExSteps: bigint
  maxBlockExMem: bigint
  maxBlockExSteps: bigint
  maxValSize: number
  collateralPercent: number
  maxCollateralInputs: number
  govActionDeposit: bigint
  govActionLifetime: number
  drepDeposit: bigint
  drepActivity: number
  committeeMinSize: number
  committeeMaxTermLength: number
  minFeeRefScriptCostPerByte: number
  costModels: Record<'PlutusV1' | 'PlutusV2' | 'PlutusV3', number[]>
}

// Cost model arrays as on-chain: V1 and V2 as set by the Alonzo and Vasil hard forks, V3 as in the
// Conway genesis. The devnet does not run Plutus yet; they are published for clients that build
// script transactions.
const PLUTUS_V1 = [205665, 812, 1, 1, 1000, 571, 0, 1, 1000, 24177, 4, 1, 1000, 32, 117366, 10475, 4, 23000, 100, 23000, 100, 23000, 100, 23000, 100, 23000, 100, 23000, 100, 100, 100, 23000, 100, 19537, 32, 175354, 32, 46417, 4, 221973, 511, 0, 1, 89141, 32, 497525, 14068, 4, 2, 196500, 453240, 220, 0, 1, 1, 1000, 28662, 4, 2, 245000, 216773, 62, 1, 1060367, 12586, 1, 208512, 421, 1, 187000, 1000, 52998, 1, 80436, 32, 43249, 32, 1000, 32, 80556, 1, 57667, 4, 1000, 10, 197145, 156, 1, 197145, 156, 1, 204924, 473, 1, 208896, 511, 1, 52467, 32, 64832, 32, 65493, 32, 22558, 32, 16563, 32, 76511, 32, 196500, 453240, 220, 0, 1, 1, 69522, 11687, 0, 1, 60091, 32, 196500, 453240, 220, 0, 1, 1, 196500, 453240, 220, 0, 1, 1, 806990, 30482, 4, 1927926, 82523, 4, 265318, 0, 4, 0, 85931, 32, 205665, 812, 1, 1, 41182, 32, 212342, 32, 31220, 32, 32696, 32, 43357, 32, 32247, 32, 38314, 32, 9462713, 1021, 10]
const PLUTUS_V2 = [205665, 812, 1, 1, 1000, 571, 0, 1, 1000, 24177, 4, 1, 1000, 32, 117366, 10475, 4, 23000, 100, 23000, 100, 23000, 100, 23000, 100, 23000, 100, 23000, 100, 100, 100, 23000, 100, 19537, 32, 175354, 32, 46417, 4, 221973, 511, 0, 1, 89141, 32, 497525, 14068, 4, 2, 196500, 453240, 220, 0, 1, 1, 1000, 28662, 4, 2, 245000, 216773, 62, 1, 1060367, 12586, 1, 208512, 421, 1, 187000, 1000, 52998, 1, 80436, 32, 43249, 32, 1000, 32, 80556, 1, 57667, 4, 1000, 10, 197145, 156, 1, 197145, 156, 1, 204924, 473, 1, 208896, 511, 1, 52467, 32, 64832, 32, 65493, 32, 22558, 32, 16563, 32, 76511, 32, 196500, 453240, 220, 0, 1, 1, 69522, 11687, 0, 1, 60091, 32, 196500, 453240, 220, 0, 1, 1, 196500, 453240, 220, 0, 1, 1, 1159724, 392670, 0, 2, 806990, 30482, 4, 1927926, 82523, 4, 265318, 0, 4, 0, 85931, 32, 205665, 812, 1, 1, 41182, 32, 212342, 32, 31220, 32, 32696, 32, 43357, 32, 32247, 32, 38314, 32, 35892428, 10, 57996947, 18975, 10, 38887044, 32947, 10]
const PLUTUS_V3 = [100788, 420, 1, 1, 1000, 173, 0, 1, 1000, 59957, 4, 1, 11183, 32, 201305, 8356, 4, 16000, 100, 16000, 100, 16000, 100, 16000, 100, 16000, 100, 16000, 100, 100, 100, 16000, 100, 94375, 32, 132994, 32, 61462, 4, 72010, 178, 0, 1, 22151, 32, 91189, 769, 4, 2, 85848, 123203, 7305, -900, 1716, 549, 57, 85848, 0, 1, 1, 1000, 42921, 4, 2, 24548, 29498, 38, 1, 898148, 27279, 1, 51775, 558, 1, 39184, 1000, 60594, 1, 141895, 32, 83150, 32, 15299, 32, 76049, 1, 13169, 4, 22100, 10, 28999, 74, 1, 28999, 74, 1, 43285, 552, 1, 44749, 541, 1, 33852, 32, 68246, 32, 72362, 32, 7243, 32, 7391, 32, 11546, 32, 85848, 123203, 7305, -900, 1716, 549, 57, 85848, 0, 1, 90434, 519, 0, 1, 74433, 32, 85848, 123203, 7305, -900, 1716, 549, 57, 85848, 0, 1, 1, 85848, 123203, 7305, -900, 1716, 549, 57, 85848, 0, 1, 955506, 213312, 0, 2, 270652, 22588, 4, 1457325, 64566, 4, 20467, 1, 4, 0, 141992, 32, 100788, 420, 1, 1, 81663, 32, 59498, 32, 20142, 32, 24588, 32, 20744, 32, 25933, 32, 24623, 32, 43053543, 10, 53384111, 14333, 10, 43574283, 26308, 10, 16000, 100, 16000, 100, 962335, 18, 2780678, 6, 442008, 1, 52538055, 3756, 18, 267929, 18, 76433006, 8868, 18, 52948122, 18, 1995836, 36, 3227919, 12, 901022, 1, 166917843, 4307, 36, 284546, 36, 158221314, 26549, 36, 74698472, 36, 333849714, 1, 254006273, 72, 2174038, 72, 2261318, 64571, 4, 207616, 8310, 4, 1293828, 28716, 63, 0, 1, 1006041, 43623, 251, 0, 1]

export const PROTOCOL_PARAMETERS: ProtocolParameters = {
  minFeeA: 44,
  minFeeB: 155381,
  maxBlockSize: 90112,
  maxTxSize: 16384,
  maxBlockHeaderSize: 1100,
  keyDeposit: 2_000_000n,
  poolDeposit: 500_000_000n,
  eMax: 18,
  nOpt: 500,
  a0: 0.3,
  rho: 0.003,
  tau: 0.2,
  protocolMajorVer: 10,
  protocolMinorVer: 0,
  minPoolCost: 170_000_000n,
  coinsPerUtxoByte: 4310n,
  priceMem: 0.0577,
  priceStep: 0.0000721,
  maxTxExMem: 14_000_000n,
  maxTxExSteps: 10_000_000_000n,
  maxBlockExMem: 62_000_000n,
  maxBlockExSteps: 20_000_000_000n,
  maxValSize: 5000,
  collateralPercent: 150,
  maxCollateralInputs: 3,
  govActionDeposit: 100_000_000_000n,
  govActionLifetime: 6,
  drepDeposit: 500_000_000n,
  drepActivity: 20,
  committeeMinSize: 7,
  committeeMaxTermLength: 146,
  minFeeRefScriptCostPerByte: 15,
  costModels: { PlutusV1: PLUTUS_V1, PlutusV2: PLUTUS_V2, PlutusV3: PLUTUS_V3 },
}

/** Shelley genesis constants that the devnet shares with the public networks. */
export const GENESIS = {
  networkId: 0,
  networkMagic: 42,
  maxLovelaceSupply: 45_000_000_000_000_000n,
  activeSlotsCoefficient: 0.05,
  updateQuorum: 5,
  slotsPerKesPeriod: 129600,
  maxKesEvolutions: 62,
}
