import cds from '@sap/cds'
import { chainB } from './chain.ts'

/**
 * Whose attester key signs a caller's writes: its product grant (a key's chain-B grant through the
 * hosted gateway, or an x-agent-token self-hosted), else its user id. The sponsor is the service's.
 */
export function attesterSubjectOf(user: cds.User = cds.context?.user ?? cds.User.anonymous): string {
  const grantId = (user.attr as { grantId?: string } | undefined)?.grantId
  return grantId ? `grant:${grantId}` : `user:${user.id}`
}

export async function attesterIdOf(user?: cds.User): Promise<string> {
  return (await chainB()).attesterKey(attesterSubjectOf(user)).id
}

export async function attesterIdentity() {
  const chain = await chainB()
  return { attesterId: chain.attesterKey(attesterSubjectOf()).id, sponsorId: chain.sponsorKey().id }
}
