import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { runningDevnet } from '../support/chain-a.ts'

const { POST, GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

const TX = '/odata/v4/chaina-transaction'
let sender: string
let recipient: string
const mainnet = CSL.EnterpriseAddress.new(1, CSL.Credential.from_keyhash(CSL.Ed25519KeyHash.from_hex('ab'.repeat(28)))).to_address().to_bech32()

beforeAll(() => {
  const devnet = runningDevnet()
  sender = devnet.wallets()[0].address
  recipient = devnet.wallets()[1].address
})

const builds = async () => (await GET(`${TX}/TransactionBuilds?$count=true&$top=0`)).data['@odata.count']

describe('bad build input answers 4xx with a code naming the problem, and records nothing', () => {
  test.each([
    ['insufficient funds, with the shortfall', 'BuildSimpleAdaTransaction', () => ({ senderAddress: sender, recipientAddress: recipient, lovelaceAmount: '900000000000000' }), 'INSUFFICIENT_FUNDS', /short|missing|lacks/i],
    ['an amount below the minimum ADA', 'BuildSimpleAdaTransaction', () => ({ senderAddress: sender, recipientAddress: recipient, lovelaceAmount: '1000' }), 'OUTPUT_BELOW_MIN_ADA', /minimum|at least/i],
    ['a mainnet recipient on a test network', 'BuildSimpleAdaTransaction', () => ({ senderAddress: sender, recipientAddress: mainnet, lovelaceAmount: '2000000' }), 'WRONG_NETWORK', /mainnet/],
    ['a malformed sender', 'BuildSimpleAdaTransaction', () => ({ senderAddress: 'addr_test1xyz', recipientAddress: recipient, lovelaceAmount: '2000000' }), 'INVALID_ADDRESS', /address/],
    ['an amount that is not a whole number', 'BuildSimpleAdaTransaction', () => ({ senderAddress: sender, recipientAddress: recipient, lovelaceAmount: '1.5' }), 'INVALID_AMOUNT', /whole number/],
    ['a missing recipient', 'BuildSimpleAdaTransaction', () => ({ senderAddress: sender, lovelaceAmount: '2000000' }), 'MISSING_PARAMETER', /recipientAddress/],
    ['an unknown builder', 'BuildSimpleAdaTransaction', () => ({ senderAddress: sender, recipientAddress: recipient, lovelaceAmount: '2000000', builder: 'magic' }), 'UNKNOWN_BUILDER', /csl, buildooor/],
    ['malformed assetsJson', 'BuildMultiAssetTransaction', () => ({ senderAddress: sender, recipientAddress: recipient, assetsJson: '[{' }), 'INVALID_ASSETS', /JSON/],
    ['an asset the sender does not hold', 'BuildMultiAssetTransaction', () => ({ senderAddress: sender, recipientAddress: recipient, assetsJson: JSON.stringify([{ unit: 'cd'.repeat(28) + '01', quantity: '5' }]) }), 'INSUFFICIENT_FUNDS', /cdcdcd/],
    ['a malformed policy', 'BuildTokenMintTransaction', () => ({ senderAddress: sender, mintActionsJson: JSON.stringify([{ assetName: 'X', quantity: '1' }]), mintingPolicyScript: '{"type":"nope"}' }), 'INVALID_NATIVE_SCRIPT', /./],
    ['a zero mint quantity', 'BuildTokenMintTransaction', () => ({ senderAddress: sender, mintActionsJson: JSON.stringify([{ assetName: 'X', quantity: '0' }]), mintingPolicyScript: '{"type":"sig","keyHash":"' + 'ab'.repeat(28) + '"}' }), 'INVALID_MINT_ACTIONS', /non-zero/],
    ['metadata that is not an object', 'BuildMetadataTransaction', () => ({ senderAddress: sender, metadataJson: '[1,2]' }), 'INVALID_METADATA', /object/],
    ['neither message nor metadata', 'BuildMetadataTransaction', () => ({ senderAddress: sender }), 'INVALID_METADATA', /message/],
    ['a Plutus spend of an output that does not exist', 'BuildPlutusSpendTransaction', () => ({ senderAddress: sender, validatorScript: '4e4d01000033222220051200120011', scriptTxHash: 'ab'.repeat(32), scriptOutputIndex: 0, redeemerJson: '{"int":1}' }), 'OUTPUT_NOT_FOUND', /ab/],
  ])('%s', async (_name, action, body, code, message) => {
    const before = await builds()
    const response = await POST(`${TX}/${action}`, body())
    expect(response.data.error).toMatchObject({ code, message: expect.stringMatching(message) })
    expect(response.status).toBeGreaterThanOrEqual(400)
    expect(response.status).toBeLessThan(500)
    expect(await builds()).toBe(before)
  })
})
