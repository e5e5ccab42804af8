import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocketServer } from 'ws'
import type { ChainADevnet, WalletKeyPair } from '../../devnet/chain-a/index.ts'
import type { Output } from '../../devnet/chain-a/types.ts'
import { BlockfrostAdapter } from '../../srv/chains/chain-a/blockfrost.ts'
import { KupoClient } from '../../srv/chains/chain-a/kupo.ts'
import { OgmiosLedgerReads, type IndexFigures } from '../../srv/chains/chain-a/ogmios-ledger.ts'
import { OgmiosRpc } from '../../srv/chains/chain-a/ogmios-rpc.ts'
import type { ChainAPort, ListPage } from '../../srv/chains/chain-a/port.ts'
import { ADA, buildTx, largestUtxo, plutusData, startDevnet } from '../support/devnet.ts'
import fixture from '../fixtures/plutus/redeemer-equals-datum.plutus.json'

/**
 * The ledger-state reads over Ogmios (JSON-RPC at /ogmios) and Kupo (at /kupo) answer as the
 * Blockfrost adapter does against the same devnet, except the documented differences: what
 * neither Ogmios nor Kupo reports is null, lists of pools and DReps are in hex-id order, and only the current epoch's
 * protocol parameters are known. Submission and failures of either upstream are checked too.
 */

let devnet: ChainADevnet
let blockfrost: ChainAPort
let rpc: OgmiosRpc
let kupo: KupoClient
let reads: OgmiosLedgerReads
let w1: WalletKeyPair
let w2: WalletKeyPair
let locked: Output
let withDatumHash: Output
const validator = CSL.PlutusScript.from_bytes_v3(Buffer.from(fixture.cborHex, 'hex'))
const scriptAddress = CSL.EnterpriseAddress.new(0, CSL.Credential.from_scripthash(validator.hash())).to_address().to_bech32()
const asc: ListPage = { page: 1, order: 'asc' }
const desc: ListPage = { page: 1, order: 'desc' }

/** The chain-sync index's figures, read here off the devnet's ledger (the index is tested on its own). */
function ledgerFigures(): IndexFigures {
  return {
    poolBlockCounts(poolId, epoch) {
      const blocks = [...devnet.ledger.pools.values()].find(pool => pool.id === poolId)?.blocks ?? []
      return { total: blocks.length, epoch: blocks.filter(hash => devnet.ledger.block(hash)!.epoch === epoch).length }
    },
    accountTotals(stakeAddress) {
      const account = devnet.ledger.accounts.get(stakeAddress)
      return { withdrawalsSum: String(account?.withdrawalsSum ?? 0n), activeEpoch: account?.activeEpoch ?? null }
    },
    currentEpoch: async () => devnet.ledger.currentEpoch,
  }
}

const ogmiosUrl = () => devnet.url.replace(/^http/, 'ws') + '/ogmios'

beforeAll(async () => {
  devnet = await startDevnet({ seed: 'ogmios-ledger', activity: true, epochLength: 40 })
  w1 = devnet.walletKeys('wallet-1')
  w2 = devnet.walletKeys('wallet-2')
  // Past two epoch boundaries, so that the pools have minted and the accounts earned rewards.
  for (let i = 0; i < 90; i++) {
    devnet.activity.round()
    devnet.produceBlock()
  }
  const rewards = devnet.ledger.accounts.get(w1.stakeAddress)!.rewards
  devnet.submit(buildTx({ inputs: [largestUtxo(devnet, w1.address)], withdrawals: [{ stakeAddress: w1.stakeAddress, amount: rewards }], signers: [w1.payment, w1.stake] }))
  devnet.produceBlock()
  // Outputs with an inline datum and a reference script, and with a datum hash.
  const lockTx = devnet.submit(buildTx({
    inputs: [largestUtxo(devnet, w2.address)],
    outputs: [
      { address: scriptAddress, coin: 10n * ADA, datum: { inline: plutusData({ int: 42 }) }, scriptRef: validator },
      { address: scriptAddress, coin: 5n * ADA, datum: { hash: plutusData({ int: 7 }) } },
    ],
    signers: [w2.payment],
  }))
  devnet.produceBlock()
  locked = devnet.ledger.outputs.get(`${lockTx}#0`)!
  withDatumHash = devnet.ledger.outputs.get(`${lockTx}#1`)!

  blockfrost = new BlockfrostAdapter({ network: 'devnet', url: devnet.url, timeoutMs: 10_000, retries: 0, clientRateLimit: false })
  rpc = new OgmiosRpc({ url: ogmiosUrl(), timeoutMs: 10_000 })
  kupo = new KupoClient({ url: `${devnet.url}/kupo`, timeoutMs: 10_000, retries: 0 })
  reads = new OgmiosLedgerReads({ rpc, kupo, network: 'devnet', figures: ledgerFigures() })
})

afterAll(async () => {
  await rpc?.close()
  await devnet?.stop()
})

const sortedUtxos = <T extends { txHash: string; outputIndex: number }>(utxos: T[]) => [...utxos].sort((a, b) => (a.txHash === b.txHash ? a.outputIndex - b.outputIndex : a.txHash < b.txHash ? -1 : 1))
const byHex = <T extends { hex: string }>(items: T[]) => [...items].sort((a, b) => (a.hex < b.hex ? -1 : 1))
const activityAddress = () => devnet.ledger.genesis.activityWallets[0].address

describe('the reads answer as Blockfrost does', () => {
  test('the protocol parameters of the current epoch; Ogmios knows no other epoch\'s', async () => {
    const current = (await blockfrost.protocolParameters())!
    expect(await reads.protocolParameters()).toEqual(current)
    expect(await reads.protocolParameters(current.epoch)).toEqual(current)
    // Documented: Ogmios answers the ledger state at its tip only.
    expect(current.epoch).toBeGreaterThan(0)
    expect(await blockfrost.protocolParameters(0)).not.toBeNull()
    expect(await reads.protocolParameters(0)).toBeNull()
  })

  test('the genesis', async () => {
    expect(await reads.genesis()).toEqual(await blockfrost.genesis())
  })

  test('addresses and their unspent outputs, with assets, inline datums, datum hashes and reference scripts', async () => {
    for (const address of [w1.address, w2.address, activityAddress(), scriptAddress]) {
      expect({ address, found: await reads.address(address) }).toEqual({ address, found: await blockfrost.address(address) })
      expect(sortedUtxos(await reads.addressUtxos(address))).toEqual(sortedUtxos(await blockfrost.addressUtxos(address)))
    }
    const atScript = await reads.addressUtxos(scriptAddress)
    expect(atScript.find(utxo => utxo.outputIndex === locked.index && utxo.txHash === locked.txHash)).toMatchObject({
      inlineDatum: locked.inlineDatum, dataHash: null, referenceScriptHash: validator.hash().to_hex(),
    })
    expect(atScript.find(utxo => utxo.txHash === withDatumHash.txHash && utxo.outputIndex === withDatumHash.index)).toMatchObject({ dataHash: withDatumHash.dataHash, inlineDatum: null })
    expect((await reads.address(activityAddress()))!.assets.length).toBeGreaterThan(0)

    const unknown = 'addr_test1vz2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzerspjrlsz'
    expect(await blockfrost.address(unknown)).toBeNull()
    expect(await reads.address(unknown)).toBeNull()
    expect(await reads.addressUtxos(unknown)).toEqual([])
  })

  test('accounts: delegation, rewards, withdrawals and controlled stake; an unknown one is null', async () => {
    expect(devnet.ledger.accounts.get(w1.stakeAddress)!.withdrawalsSum).toBeGreaterThan(0n)
    const activityStake = devnet.ledger.genesis.activityWallets[0].stakeAddress
    for (const stakeAddress of [w1.stakeAddress, w2.stakeAddress, activityStake]) {
      const bf = (await blockfrost.account(stakeAddress))!
      expect(BigInt(bf.rewardsSum)).toBeGreaterThan(0n)
      // Documented: the MIR sums are null (none on the devnet, where Blockfrost's are 0 too).
      expect(await reads.account(stakeAddress)).toEqual({ ...bf, reservesSum: null, treasurySum: null })
    }
    const unknown = 'stake_test1uqfu74w3wh4gfzu8m6e7j987h4lq9r3t7ef5gaw497uu85qsqfy27'
    expect(await blockfrost.account(unknown)).toBeNull()
    expect(await reads.account(unknown)).toBeNull()
  })

  test('a pool: its parameters, live stake and share, pledge and blocks; the figures Ogmios lacks are documented', async () => {
    const [listed] = await blockfrost.pools(asc)
    const bf = (await blockfrost.pool(listed.poolId))!
    expect(bf.blocksMinted).toBeGreaterThan(0)
    expect(await reads.pool(listed.poolId)).toEqual({
      ...bf,
      // The shares are computed from the live stakes at full precision; the devnet's Blockfrost rounds them to 9 decimals.
      liveSize: expect.closeTo(bf.liveSize!, 8),
      liveSaturation: expect.closeTo(bf.liveSaturation, 8),
      // Documented: neither Ogmios nor Kupo reports the active stake, the delegator count or a pending retirement.
      activeStake: null,
      activeSize: null,
      liveDelegators: null,
      retiring: null,
      // Documented: pool metadata is off-chain; Ogmios gives its URL and hash only.
      ticker: null, name: null, homepage: null, description: null,
    })
    expect(await reads.pool(bf.hex)).toEqual(await reads.pool(bf.poolId))
    expect(await reads.pool(CSL.Ed25519KeyHash.from_hex('ab'.repeat(28)).to_bech32('pool'))).toBeNull()
  })

  test('the pools, in hex-id order (Ogmios\'s), with the same figures', async () => {
    const expected = (await blockfrost.pools(asc)).map(pool => ({
      ...pool, liveSaturation: expect.closeTo(pool.liveSaturation, 8), activeStake: null, ticker: null, name: null, homepage: null, description: null,
    }))
    // Documented: Blockfrost lists pools by registration, Ogmios by key hash.
    expect(await reads.pools(asc)).toEqual(byHex(expected))
    expect(await reads.pools(desc)).toEqual(byHex(expected).reverse())
    expect(await reads.pools({ page: 2, order: 'asc' })).toEqual([])
  })

  test('DReps and their list, in hex-id order; a DRep\'s last active epoch is null', async () => {
    const bfDreps = await blockfrost.dreps(asc)
    expect(bfDreps.length).toBeGreaterThan(1)
    const expected = bfDreps.map(drep => ({ ...drep, lastActiveEpoch: null }))
    expect(await reads.dreps(asc)).toEqual(byHex(expected))
    expect(await reads.dreps(desc)).toEqual(byHex(expected).reverse())
    for (const drep of bfDreps) {
      expect(BigInt(drep.amount)).toBeGreaterThan(0n)
      expect(await reads.drep(drep.drepId)).toEqual({ ...(await blockfrost.drep(drep.drepId))!, lastActiveEpoch: null })
    }
    const cip129 = CSL.DRep.new_key_hash(CSL.Ed25519KeyHash.from_hex(bfDreps[0].hex)).to_bech32(false)
    expect(await reads.drep(cip129)).toEqual(await reads.drep(bfDreps[0].drepId))
    expect(await reads.drep(CSL.Ed25519KeyHash.from_hex('cd'.repeat(28)).to_bech32('drep'))).toBeNull()
  })

  test('a DRep\'s delegators, the genesis\'s among them, with what each controls, by stake address; an unknown DRep is null', async () => {
    const byStakeAddress = (list: { stakeAddress: string }[]) => [...list].sort((a, b) => (a.stakeAddress < b.stakeAddress ? -1 : 1))
    for (const drep of await blockfrost.dreps(asc)) {
      const expected = byStakeAddress((await blockfrost.drepDelegators(drep.drepId, asc))!)
      expect(expected.length).toBeGreaterThan(0)
      expect(await reads.drepDelegators(drep.drepId, asc)).toEqual(expected)
      expect(await reads.drepDelegators(drep.drepId, desc)).toEqual([...expected].reverse())
      expect(await reads.drepDelegators(drep.drepId, { page: 2, order: 'asc' })).toEqual([])
    }
    expect(await reads.drepDelegators(CSL.Ed25519KeyHash.from_hex('cd'.repeat(28)).to_bech32('drep'), asc)).toBeNull()
  })

  test('the supply and stake figures Ogmios has; the others are documented', async () => {
    const bf = await blockfrost.network()
    expect(BigInt(bf.treasurySupply)).toBeGreaterThan(0n)
    expect(await reads.network()).toEqual({
      ...bf,
      // Documented: the circulating supply (the whole UTxO set) and the active stake are null; the locked supply is null.
      circulatingSupply: null,
      activeStake: null,
      lockedSupply: null,
    })
  })
})

describe('Kupo\'s outputs, datums and scripts', () => {
  test('an output by reference, spent or unspent, holds what Blockfrost says the transaction made', async () => {
    const spentTx = devnet.ledger.blocks.flatMap(block => block.txs).map(hash => devnet.ledger.txs.get(hash)!)
      .find(tx => tx.outputs.some((_, index) => devnet.ledger.outputs.get(`${tx.hash}#${index}`)?.spentBy))!
    for (const hash of [spentTx.hash, locked.txHash]) {
      const { outputs } = (await blockfrost.transaction(hash))!
      for (const { outputIndex, collateral, consumedBy, ...content } of outputs) {
        expect({ outputIndex, collateral, consumedBy: typeof consumedBy, content: await kupo.output(hash, outputIndex) }).toEqual({ outputIndex, collateral, consumedBy: typeof consumedBy, content })
      }
    }
    expect(await kupo.output('ef'.repeat(32), 0)).toBeNull()
  })

  test('datums and scripts by hash; unknown ones are null', async () => {
    expect(await kupo.datum(CSL.hash_plutus_data(plutusData({ int: 42 })).to_hex())).toBe(locked.inlineDatum)
    expect(await kupo.script(validator.hash().to_hex())).toEqual({ language: 'plutus:v3', script: Buffer.from(validator.bytes()).toString('hex') })
    expect(await kupo.datum('00'.repeat(32))).toBeNull()
    expect(await kupo.script('00'.repeat(28))).toBeNull()
  })

  test('matches filtered by asset, status and creation bound', async () => {
    const [unit] = (await reads.address(activityAddress()))!.assets.map(asset => asset.unit)
    const withAsset = await kupo.matches('*', { unspent: true, policyId: unit.slice(0, 56), assetName: unit.slice(56) || undefined })
    expect(withAsset.length).toBeGreaterThan(0)
    expect(withAsset.every(match => match.spent_at === null && Object.keys(match.value.assets ?? {}).some(asset => asset.replace('.', '') === unit))).toBe(true)
    // Bounds are inclusive: the outputs of the block that locked them are after its point, none is before its slot.
    const lockBlock = devnet.ledger.block(locked.blockHash)!
    const after = await kupo.matches(scriptAddress, { createdAfter: { slot_no: lockBlock.slot, header_hash: lockBlock.hash } })
    expect(after.map(match => `${match.transaction_id}#${match.output_index}`).sort()).toEqual([locked.ref, withDatumHash.ref].sort())
    expect(await kupo.matches(scriptAddress, { createdBefore: lockBlock.slot - 1 })).toEqual([])
    const all = await kupo.matches(scriptAddress, { createdAfter: 0, order: 'oldest_first' })
    expect(all.map(match => typeof match.value.coins)).toEqual(all.map(() => 'string'))
  })
})

describe('submission', () => {
  test('a signed transaction is submitted and answered with its hash; the ledger\'s refusal is 400 TX_REJECTED with the reason', async () => {
    const cbor = buildTx({ inputs: [largestUtxo(devnet, w1.address)], outputs: [{ address: w2.address, coin: 2n * ADA }], signers: [w1.payment] })
    expect(await reads.submit(cbor)).toBe(CSL.FixedTransaction.from_bytes(cbor).transaction_hash().to_hex())
    devnet.produceBlock()
    // The same refusal as through Blockfrost: the ledger's rule and reason (Ogmios's error data follows).
    const bfRefusal = await blockfrost.submit(cbor).then(() => undefined, (error: Error) => error)
    expect(bfRefusal).toMatchObject({ status: 400, code: 'TX_REJECTED', message: expect.stringMatching(/^chain-A rejected the transaction: DuplicateTransaction: /) })
    await expect(reads.submit(cbor)).rejects.toMatchObject({ status: 400, code: 'TX_REJECTED', message: expect.stringContaining(bfRefusal!.message) })
    const unsigned = buildTx({ inputs: [largestUtxo(devnet, w2.address)], outputs: [{ address: w1.address, coin: 2n * ADA }], signers: [] })
    await expect(reads.submit(unsigned)).rejects.toMatchObject({ status: 400, code: 'TX_REJECTED', message: expect.stringContaining('MissingVKeyWitnessesUTXOW') })
    await expect(reads.submit(new Uint8Array([0x84, 0xa0]))).rejects.toMatchObject({ status: 400, code: 'TX_REJECTED' })
  })
})

describe('failures of the upstreams', () => {
  test('Kupo down is 503 UPSTREAM_UNAVAILABLE; Kupo\'s own errors are mapped like the other upstreams\'', async () => {
    const down = new OgmiosLedgerReads({ rpc, kupo: new KupoClient({ url: 'http://127.0.0.1:1', timeoutMs: 5000, retries: 0 }), network: 'devnet', figures: ledgerFigures() })
    await expect(down.addressUtxos(w1.address)).rejects.toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
    await expect(down.account(w1.stakeAddress)).rejects.toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })

    let status = 500
    const server: Server = createServer((_req, res) => res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '30' }).end('{"hint":"busy"}'))
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      await expect(new KupoClient({ url, timeoutMs: 5000, retries: 1 }).utxos(w1.address)).rejects.toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE', message: expect.stringContaining('busy') })
      status = 429
      await expect(new KupoClient({ url, timeoutMs: 5000, retries: 0 }).utxos(w1.address)).rejects.toMatchObject({ status: 429, code: 'UPSTREAM_RATE_LIMITED', retryAfter: 30 })
    } finally {
      server.close()
    }
  })

  test('Ogmios unreachable is 503 UPSTREAM_UNAVAILABLE, for reads and for a submission that never left', async () => {
    const unreachable = new OgmiosRpc({ url: 'ws://127.0.0.1:1', timeoutMs: 5000 })
    const down = new OgmiosLedgerReads({ rpc: unreachable, kupo, network: 'devnet', figures: ledgerFigures() })
    try {
      await expect(down.genesis()).rejects.toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
      await expect(down.submit(new Uint8Array([0x84]))).rejects.toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
    } finally {
      await unreachable.close()
    }
  })

  test('the connection dropped while submitting is 503 SUBMIT_UNCONFIRMED: the transaction may have reached the node, and may be sent again', async () => {
    const server = new WebSocketServer({ port: 0, host: '127.0.0.1' })
    await new Promise(resolve => server.once('listening', resolve))
    server.on('connection', socket => socket.on('message', data => {
      if (JSON.parse(data.toString()).method === 'submitTransaction') socket.terminate()
    }))
    const dropping = new OgmiosRpc({ url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, timeoutMs: 10_000 })
    try {
      const dropped = new OgmiosLedgerReads({ rpc: dropping, kupo, network: 'devnet', figures: ledgerFigures() })
      const cbor = buildTx({ inputs: [largestUtxo(devnet, w2.address)], outputs: [{ address: w1.address, coin: 2n * ADA }], signers: [w2.payment] })
      const error = await dropped.submit(cbor).then(() => undefined, (failure: unknown) => failure)
      expect(error).toMatchObject({ status: 503, code: 'SUBMIT_UNCONFIRMED' })
      expect((error as Error).message).toMatch(/unknown/)
      expect((error as Error).message).toMatch(/same signed transaction again/)
    } finally {
      await dropping.close()
      await new Promise(resolve => server.close(resolve))
    }
  })
})
