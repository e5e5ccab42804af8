import { indexerPublicDataProvider } from '@midnight-ntwrk/midnight-js-indexer-public-data-provider'
import { firstValueFrom } from 'rxjs'
import WebSocket from 'ws'

/**
 * A dApp's view of chain B: Midnight's own public-data provider, unchanged, run against an indexer
 * (`node test/chains/chain-b/midnight-provider.ts <query URL> <subscription URL> <contract address>`).
 * Prints, as JSON, what each of its contract methods answered: a state re-serialized with the
 * provider's runtime (hex) and its entry points, the contract's unshielded balances, its zswap state
 * and ledger parameters (re-serialized), its deployment as the provider read it (the transaction
 * deserialized), or the error the method threw.
 */

const [queryUrl, subscriptionUrl, address] = process.argv.slice(2)
const provider = indexerPublicDataProvider(queryUrl, subscriptionUrl, WebSocket as never)

type State = { serialize(): Uint8Array; operations(): (string | Uint8Array)[] } | null
const seen = (state: State) => state && { state: Buffer.from(state.serialize()).toString('hex'), operations: state.operations().map(String).sort() }

async function answer(method: () => Promise<State>) {
  try {
    return seen(await method())
  } catch (error) {
    return { error: String((error as Error)?.message ?? error) }
  }
}

async function balances(method: () => Promise<unknown>) {
  try {
    return { balances: JSON.parse(JSON.stringify(await method(), (_, value) => (typeof value === 'bigint' ? String(value) : value))) }
  } catch (error) {
    return { error: String((error as Error)?.message ?? error) }
  }
}

type Serialized = { serialize(): Uint8Array }
const hex = (value: Serialized) => Buffer.from(value.serialize()).toString('hex')

async function zswapAndContractState() {
  try {
    const answer = (await provider.queryZSwapAndContractState(address)) as [Serialized & { firstFree: bigint }, State, Serialized & { feePrices: object }] | null
    if (!answer) return null
    const [zswap, contract, parameters] = answer
    return { zswapState: hex(zswap), firstFree: String(zswap.firstFree), contract: seen(contract), ledgerParameters: hex(parameters), feePrices: parameters.feePrices }
  } catch (error) {
    return { error: String((error as Error)?.message ?? error) }
  }
}

type TxData = Awaited<ReturnType<typeof provider.watchForTxData>>
const txSeen = (data: TxData) => ({ txId: data.txId, txHash: data.txHash, identifiers: data.identifiers, status: data.status, blockHeight: data.blockHeight, transactionHash: data.tx.transactionHash(), paidFees: String(data.fees.paidFees) })

async function transaction(read: () => Promise<TxData>) {
  try {
    return txSeen(await read())
  } catch (error) {
    return { error: String((error as Error)?.message ?? error) }
  }
}

void (async () => {
  const answers = {
    queryContractState: await answer(() => provider.queryContractState(address) as Promise<State>),
    queryContractStateAtGenesis: await answer(() => provider.queryContractState(address, { type: 'blockHeight', blockHeight: 0 }) as Promise<State>),
    queryDeployContractState: await answer(() => provider.queryDeployContractState(address) as Promise<State>),
    watchForContractState: await answer(() => provider.watchForContractState(address) as Promise<State>),
    contractStateObservable: await answer(() => firstValueFrom(provider.contractStateObservable(address, { type: 'latest' })) as Promise<State>),
    queryUnshieldedBalances: await balances(() => provider.queryUnshieldedBalances(address)),
    watchForUnshieldedBalances: await balances(() => provider.watchForUnshieldedBalances(address)),
    unshieldedBalancesObservable: await balances(() => firstValueFrom(provider.unshieldedBalancesObservable(address, { type: 'latest' }))),
    queryZSwapAndContractState: await zswapAndContractState(),
    watchForDeployTxData: await transaction(() => provider.watchForDeployTxData(address)),
    // A dApp that deployed a contract waits for its transaction by the identifier it holds.
    watchForTxData: await transaction(async () => provider.watchForTxData((await provider.watchForDeployTxData(address)).identifiers[0])),
  }
  process.stdout.write(JSON.stringify(answers))
  process.exit(0)
})()
