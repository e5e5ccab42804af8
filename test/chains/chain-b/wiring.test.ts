import cds from '@sap/cds'
import { chainB } from '../../../srv/chains/chain-b/index.ts'
import { callDigest, sha256Hex, signDigest } from '../../../srv/chains/chain-b/vault.ts'
import { chainBStatus, produceBlocks, runningChainB } from '../../support/chain-b.ts'

/** The bootstrap connects chain B to its embedded devnet in the test profile: the service, its keys, the sponsor and a write end to end. */

cds.test(__dirname + '/../../..')

describe('chain-b service on the embedded devnet', () => {
  it('answers the settings of the embedded devnet', async () => {
    const service = await chainB()
    const devnet = runningChainB()
    expect(service.settings).toMatchObject({ network: 'devnet', finalityDepth: 1, vaultAddress: devnet.vaultAddress, indexerUrl: devnet.indexerUrl, submitUrl: devnet.submitUrl })
    expect(chainBStatus().tipHeight).toBe(0)
  })

  it('derives one attester key per subject, the same each time', async () => {
    const service = await chainB()
    const a = service.attesterKey('grant-1')
    expect(service.attesterKey('grant-1').publicKey).toBe(a.publicKey)
    expect(service.attesterKey('grant-2').publicKey).not.toBe(a.publicKey)
    expect(a.id).toBe(sha256Hex(Buffer.from(a.publicKey, 'hex')))
  })

  it('funds the sponsor from the faucet, submits a call and reads it back', async () => {
    const service = await chainB()
    const sponsor = service.sponsorKey()
    expect(await service.port.sponsorBalance(sponsor.publicKey)).toBe('0')
    await service.ensureSponsorFunded()
    expect(BigInt(await service.port.sponsorBalance(sponsor.publicKey))).toBeGreaterThanOrEqual(service.settings.sponsorMinBalance)
    const attester = service.attesterKey('user-1')
    const call = { circuit: 'attest', args: { payloadHash: sha256Hex('doc'), metadataHash: sha256Hex('meta') } }
    const contractAddress = service.settings.vaultAddress!
    const digest = callDigest(contractAddress, call, 'nonce-0001')
    const submission = await service.port.submit({ contractAddress, call, nonce: 'nonce-0001', attesterKey: attester.publicKey, signature: signDigest(attester, digest), sponsorKey: sponsor.publicKey, sponsorSignature: signDigest(sponsor, digest) })
    expect(submission.duplicate).toBe(false)
    produceBlocks(1)
    const [tx] = await service.port.transactions({ identifier: submission.identifier })
    expect(tx).toMatchObject({ hash: submission.hash, kind: 'RegularTransaction', result: { status: 'SUCCESS' }, blockHeight: 1 })
    const action = await service.port.contractAction(contractAddress)
    expect(action).toMatchObject({ kind: 'ContractCall', entryPoint: 'attest' })
  })

  it('reads the vault from its ContractState; a state that is no vault ContractState is 502 CHAIN_B_UPSTREAM_ERROR naming the problem', async () => {
    const service = await chainB()
    expect(Object.keys((await service.vaultState()).documents)).toContain(sha256Hex('doc'))
    const latest = (await service.port.contractAction(service.settings.vaultAddress!))!
    for (const [i, state] of ['ff', Buffer.from('{"documents":{}}').toString('hex')].entries()) {
      const version = { transactionId: latest.version.transactionId + 1 + i, transactionHash: sha256Hex(`unreadable ${i}`) }
      const ask = jest.spyOn(service.port, 'contractStateVersion').mockResolvedValueOnce(version)
      const read = jest.spyOn(service.port, 'contractAction').mockResolvedValueOnce({ ...latest, state, version })
      await expect(service.vaultState()).rejects.toMatchObject({ status: 502, code: 'CHAIN_B_UPSTREAM_ERROR', message: expect.stringMatching(/^the attestation vault's state on chain B cannot be read: /) })
      ask.mockRestore()
      read.mockRestore()
    }
  })

  it("fetches the vault's state only when it changed: without a write, a read asks only which state is current", async () => {
    const service = await chainB()
    const read = jest.spyOn(service.port, 'contractAction')
    try {
      const before = await service.vaultState()
      expect(await service.vaultState()).toBe(before)
      expect(read).toHaveBeenCalledTimes(1)
      const attester = service.attesterKey('user-1')
      const sponsor = service.sponsorKey()
      const call = { circuit: 'attest', args: { payloadHash: sha256Hex('doc 2'), metadataHash: sha256Hex('meta') } }
      const contractAddress = service.settings.vaultAddress!
      const digest = callDigest(contractAddress, call, 'nonce-0002')
      await service.port.submit({ contractAddress, call, nonce: 'nonce-0002', attesterKey: attester.publicKey, signature: signDigest(attester, digest), sponsorKey: sponsor.publicKey, sponsorSignature: signDigest(sponsor, digest) })
      produceBlocks(1)
      expect(Object.keys((await service.vaultState()).documents)).toContain(sha256Hex('doc 2'))
      expect(read).toHaveBeenCalledTimes(2)
    } finally {
      read.mockRestore()
    }
  })
})
