import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ChainBDevnet } from '../../../devnet/chain-b/index.ts'
import { decodeVaultState } from '../../../srv/chains/chain-b/vault-codec.ts'
import { VAULT_CIRCUITS, emptyVaultState } from '../../../srv/chains/chain-b/vault.ts'
import { hash, key, signedCall } from './helpers.ts'

/**
 * Midnight's own public-data provider (@midnight-ntwrk/midnight-js-indexer-public-data-provider),
 * unchanged, in a process of its own, against the devnet's indexer API: it deserializes the
 * vault's state with Midnight's runtime, and that state is the devnet's vault state, at the tip
 * and at the deployment; its three unshielded-balance methods read the vault's (none);
 * watchForDeployTxData reads the vault's deployment, a Midnight transaction;
 * queryZSwapAndContractState reads the vault's zswap state (no coin), its state and Midnight's
 * ledger parameters, the ones the devnet's fees are computed with; watchForTxData reads the
 * deployment by its identifier. All ten methods; watchForTxData of a vault call would need the call
 * as a Midnight transaction, which takes Midnight's proof server (docs/chain-b-encodings.md).
 */

jest.setTimeout(120_000)

let devnet: ChainBDevnet

beforeAll(async () => {
  devnet = await ChainBDevnet.start({ seed: 'midnight-provider-test', blockTimeMs: 0, epochLength: 600, activity: false, port: 0, finalityDepth: 1 })
  const sponsor = key('provider sponsor')
  devnet.ledger.grantDust(sponsor.publicKey, 10n ** 18n)
  devnet.produceBlock()
  const alice = key('provider alice')
  for (const name of ['one', 'two']) {
    devnet.ledger.submitCall(signedCall(devnet.ledger, { circuit: 'attest', args: { payloadHash: hash(name), metadataHash: hash('meta:' + name) } }, alice, sponsor))
    devnet.produceBlock()
  }
})
afterAll(() => devnet?.stop())

test('queryContractState (at the tip and at genesis), queryDeployContractState, watchForContractState, contractStateObservable and queryZSwapAndContractState read the vault; its unshielded balances read; watchForDeployTxData and watchForTxData read its deployment', async () => {
  const script = join(__dirname, 'midnight-provider.ts')
  const { stdout } = await promisify(execFile)(process.execPath, ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', script, devnet.indexerUrl, devnet.indexerWsUrl, devnet.vaultAddress], { timeout: 90_000 })
  const { queryUnshieldedBalances, watchForUnshieldedBalances, unshieldedBalancesObservable, watchForDeployTxData, watchForTxData, queryZSwapAndContractState, ...answers } = JSON.parse(stdout) as Record<string, { state: string; operations: string[] } | { error: string }>
  // The vault's deployment: the Midnight transaction of genesis, deserialized by the provider.
  const deploy = devnet.ledger.blockAt(0)!.transactions.find(tx => tx.body.type === 'deploy')!
  const deployment = { txId: deploy.identifiers[0], txHash: deploy.hash, identifiers: deploy.identifiers, status: 'SucceedEntirely', blockHeight: 0, transactionHash: deploy.hash, paidFees: '0' }
  expect(watchForDeployTxData).toEqual(deployment)
  expect(watchForTxData).toEqual(deployment)
  // The vault holds no unshielded tokens on the devnet.
  for (const balances of [queryUnshieldedBalances, watchForUnshieldedBalances, unshieldedBalancesObservable]) expect(balances).toEqual({ balances: [] })
  const entryPoints = [...VAULT_CIRCUITS].sort()
  const tip = devnet.ledger.vaultState
  expect(Object.keys(tip.documents)).toHaveLength(2)

  // The vault's zswap state (it holds no coin), its state and the tip's parameters, deserialized by the provider.
  const zswap = queryZSwapAndContractState as unknown as { zswapState: string; firstFree: string; contract: { state: string; operations: string[] }; ledgerParameters: string; feePrices: object } | { error: string }
  if ('error' in zswap) throw new Error(`queryZSwapAndContractState failed: ${zswap.error}`)
  expect(zswap).toMatchObject({ zswapState: devnet.ledger.vaultZswapState, firstFree: '0', ledgerParameters: devnet.ledger.tip.parameters.serialized, feePrices: devnet.ledger.parameters.feePrices })
  expect(zswap.contract.operations).toEqual(entryPoints)
  expect(await decodeVaultState(zswap.contract.state)).toEqual(tip)

  for (const [method, expected] of [
    ['queryContractState', tip], ['watchForContractState', tip], ['contractStateObservable', tip],
    ['queryContractStateAtGenesis', emptyVaultState()], ['queryDeployContractState', emptyVaultState()],
  ] as const) {
    const answer = answers[method]
    if ('error' in answer) throw new Error(`${method} failed: ${answer.error}`)
    expect({ method, operations: answer.operations }).toEqual({ method, operations: entryPoints })
    expect({ method, state: await decodeVaultState(answer.state) }).toEqual({ method, state: expected })
  }
})
