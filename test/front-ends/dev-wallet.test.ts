import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import vm from 'node:vm'
import { runningDevnet } from '../support/chain-a.ts'
import { buildTx, largestUtxo, ADA } from '../support/devnet.ts'
import { signWith } from '../support/sign.ts'
import { freshClientAddress } from '../support/gateway.ts'

process.env.GATEWAY_ENABLED = 'true'
const { GET, POST, axios, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true
afterAll(() => {
  delete process.env.GATEWAY_ENABLED
})

/** The portal's wallet/bytes.js, an AMD module for the browser, loaded as UI5 would define it. */
function portalModule(path: string): any {
  let exported: unknown
  const sandbox = { sap: { ui: { define: (_deps: string[], factory: () => unknown) => (exported = factory()) } }, btoa, TextEncoder }
  vm.runInNewContext(readFileSync(join(__dirname, '../../app/portal/webapp', path), 'utf8'), sandbox)
  return exported
}
const bytes = portalModule('wallet/bytes.js')

const unsignedTransfer = (from: string, to: string) => {
  const devnet = runningDevnet()
  return Buffer.from(buildTx({ inputs: [largestUtxo(devnet, from)], outputs: [{ address: to, coin: 2n * ADA }], fee: 400_000n, signers: [] })).toString('hex')
}

describe('the portal\'s wallet bytes (browser code)', () => {
  test('addresses in bech32 from the bytes CIP-30 answers: base, reward, and mainnet ones', () => {
    const [wallet] = runningDevnet().wallets()
    expect(bytes.addressToBech32(CSL.Address.from_bech32(wallet.address).to_hex())).toBe(wallet.address)
    expect(bytes.addressToBech32(CSL.Address.from_bech32(wallet.stakeAddress).to_hex())).toBe(wallet.stakeAddress)
    const mainnet = CSL.EnterpriseAddress.new(1, CSL.Credential.from_keyhash(CSL.PrivateKey.generate_ed25519().to_public().hash())).to_address()
    expect(bytes.addressToBech32(mainnet.to_hex())).toBe(mainnet.to_bech32())
  })

  test('a wallet\'s witness set joins the transaction with the body bytes untouched, as CSL signs it', () => {
    const devnet = runningDevnet()
    const [one, two] = devnet.wallets()
    const keys = devnet.walletKeys(one.name)
    const unsigned = unsignedTransfer(one.address, two.address)
    const hash = CSL.FixedTransaction.from_hex(unsigned).transaction_hash()
    const vkeys = CSL.Vkeywitnesses.new()
    vkeys.add(CSL.make_vkey_witness(hash, keys.payment))
    const witnessSet = CSL.TransactionWitnessSet.new()
    witnessSet.set_vkeys(vkeys)
    const merged = bytes.withWitnesses(unsigned, witnessSet.to_hex())
    expect(merged).toBe(signWith(unsigned, keys.payment))
    // A second signer's witness set is added to the first's.
    const second = CSL.TransactionWitnessSet.new()
    const moreKeys = CSL.Vkeywitnesses.new()
    moreKeys.add(CSL.make_vkey_witness(hash, keys.stake))
    second.set_vkeys(moreKeys)
    const twice = CSL.FixedTransaction.from_hex(bytes.withWitnesses(merged, second.to_hex()))
    expect(twice.transaction_hash().to_hex()).toBe(hash.to_hex())
    expect(twice.witness_set().vkeys()!.len()).toBe(2)
  })

  test('what is not a transaction is refused with a message', () => {
    expect(() => bytes.withWitnesses('a0', 'a0')).toThrow('Not a transaction')
    expect(() => bytes.withWitnesses('84a0', 'a0')).toThrow('The CBOR ends early')
  })
})

describe('the development wallet (/dev-wallet)', () => {
  test('lists the devnet\'s test wallets with their addresses in bech32 and hex, free of charge', async () => {
    const answer = await GET('/dev-wallet')
    expect(answer.status).toBe(200)
    expect(answer.headers['x-access-units-charged']).toBe('0')
    const devnet = runningDevnet()
    expect(answer.data.wallets).toHaveLength(devnet.wallets().length)
    const [first] = answer.data.wallets
    expect(first).toMatchObject({ wallet: 1, name: 'Devnet wallet 1', address: devnet.wallets()[0].address, addressHex: CSL.Address.from_bech32(devnet.wallets()[0].address).to_hex() })
  })

  test('signs a wallet sign-in message that the gateway accepts (CIP-30 signData)', async () => {
    const { data: list } = await GET('/dev-wallet')
    const wallet = list.wallets[2]
    const client = freshClientAddress()
    const challenge = await POST('/auth/challenge', { address: wallet.address }, { headers: { 'x-forwarded-for': client } })
    const signed = await POST('/dev-wallet/sign-data', { wallet: 3, address: wallet.addressHex, payload: challenge.data.payloadHex })
    expect(signed.status).toBe(200)
    const verified = await POST('/auth/verify', { address: wallet.address, nonce: challenge.data.nonce, ...signed.data })
    expect(verified.status).toBe(200)
    expect(verified.data.session.token).toMatch(/^cgs_/)
  })

  test('signs a transaction (signTx: a witness set), which the browser code joins and the wallet submits', async () => {
    const devnet = runningDevnet()
    const [one, two] = devnet.wallets()
    const unsigned = unsignedTransfer(one.address, two.address)
    const signed = await POST('/dev-wallet/sign-tx', { wallet: 1, tx: unsigned })
    expect(signed.status).toBe(200)
    const transaction = bytes.withWitnesses(unsigned, signed.data.witnessSet)
    const submitted = await POST('/dev-wallet/submit-tx', { tx: transaction })
    expect(submitted.status).toBe(200)
    expect(submitted.data.txHash).toBe(CSL.FixedTransaction.from_hex(unsigned).transaction_hash().to_hex())
    const again = await POST('/dev-wallet/submit-tx', { tx: transaction })
    expect([again.status, again.data.error.code]).toEqual([400, 'DEV_WALLET_TX_REJECTED'])
    devnet.produceBlock()
  })

  test('answers the wallet\'s UTxOs and balance as CIP-30 CBOR', async () => {
    const devnet = runningDevnet()
    const answer = await GET('/dev-wallet/utxos?wallet=2')
    expect(answer.status).toBe(200)
    const utxos = answer.data.utxos.map((hex: string) => CSL.TransactionUnspentOutput.from_hex(hex))
    const sum = utxos.reduce((total: bigint, utxo: CSL.TransactionUnspentOutput) => total + BigInt(utxo.output().amount().coin().to_str()), 0n)
    expect(BigInt(CSL.Value.from_hex(answer.data.balance).coin().to_str())).toBe(sum)
    expect(answer.data.lovelace).toBe(sum.toString())
    const onChain = devnet.ledger.unspentAt(devnet.wallets()[1].address).reduce((total, output) => total + output.value.coin, 0n)
    expect(sum).toBe(onChain)
  })

  test('refuses bad input with 400 and a code, never a 5xx', async () => {
    const cases: [string, unknown, string][] = [
      ['/dev-wallet/sign-tx', { wallet: 0, tx: 'aa' }, 'DEV_WALLET_REFUSED'],
      ['/dev-wallet/sign-tx', { wallet: 'x', tx: 'aa' }, 'DEV_WALLET_REFUSED'],
      ['/dev-wallet/sign-tx', { wallet: 1, tx: 'zz' }, 'DEV_WALLET_REFUSED'],
      ['/dev-wallet/sign-tx', { wallet: 1 }, 'DEV_WALLET_REFUSED'],
      ['/dev-wallet/sign-data', { wallet: 1, address: 'addr1nothing', payload: '00' }, 'DEV_WALLET_REFUSED'],
      ['/dev-wallet/sign-data', { wallet: 1, address: runningDevnet().wallets()[1].address, payload: '00' }, 'DEV_WALLET_REFUSED'],
      ['/dev-wallet/submit-tx', { tx: 'not hex' }, 'DEV_WALLET_REFUSED'],
      ['/dev-wallet/submit-tx', { tx: '84a0a0f5f6' }, 'DEV_WALLET_TX_REJECTED'],
      ['/dev-wallet/submit-tx', [1, 2], 'INVALID_BODY'],
    ]
    for (const [path, body, code] of cases) {
      const answer = await POST(path, body)
      expect([path, answer.status, answer.data.error.code]).toEqual([path, 400, code])
    }
    const notATransaction = await POST('/dev-wallet/sign-tx', { wallet: 1, tx: 'zz' })
    expect(notATransaction.data.error.message).not.toMatch(/--\w/)
    const badJson = await axios.post('/dev-wallet/sign-data', '{not json', { headers: { 'content-type': 'application/json' } })
    expect([badJson.status, badJson.data.error.code]).toEqual([400, 'INVALID_JSON'])
    expect((await GET('/dev-wallet/utxos?wallet=99')).data.error.code).toBe('DEV_WALLET_REFUSED')
    expect((await GET('/dev-wallet/sign-tx')).status).toBe(405)
  })
})
