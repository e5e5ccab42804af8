import type { SponsoredCall, VaultCall } from '../../chains/chain-b/port.ts'
import { callDigest, signDigest } from '../../chains/chain-b/vault.ts'
import type { ChainBAccess } from '../chain.ts'

/** The call as the submission API takes it: signed by the subject's attester key and by the sponsor, under the job's fixed nonce. */
export function sponsoredCall(chain: ChainBAccess, attesterSubject: string, call: VaultCall, nonce: string): SponsoredCall {
  const contractAddress = chain.settings.vaultAddress
  const digest = callDigest(contractAddress, call, nonce)
  const attester = chain.attesterKey(attesterSubject)
  const sponsor = chain.sponsorKey()
  return {
    contractAddress, call, nonce,
    attesterKey: attester.publicKey, signature: signDigest(attester, digest),
    sponsorKey: sponsor.publicKey, sponsorSignature: signDigest(sponsor, digest),
  }
}
