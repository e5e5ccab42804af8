import type { ChainADevnet } from '../../devnet/chain-a/index.ts'

/** Shared by the signing service's tests. */

export const SIGN = '/odata/v4/chaina-sign'
export const TX = '/odata/v4/chaina-transaction'
export const READ = '/odata/v4/chaina-odata'

type Post = (path: string, data?: unknown, config?: unknown) => Promise<{ status: number; data: any; headers: any }>

/** An ADA transfer built by the transaction service. */
export async function buildTransfer(POST: Post, senderAddress: string, recipientAddress: string, lovelaceAmount = '2000000', config?: unknown) {
  const build = await POST(`${TX}/BuildSimpleAdaTransaction`, { senderAddress, recipientAddress, lovelaceAmount }, config)
  if (build.status !== 201 && build.status !== 200) throw new Error(`build failed: ${JSON.stringify(build.data)}`)
  return build.data
}

/** The devnet puts the transaction in a block; the transaction service reports it confirmed and the read service serves it. */
export async function expectOnChain(POST: Post, GET: (path: string, config?: unknown) => Promise<any>, devnet: ChainADevnet, txHash: string, buildId: string) {
  devnet.produceBlock()
  const status = await POST(`${TX}/GetTransactionStatus`, { txHash })
  expect(status.data).toMatchObject({ txHash, status: 'confirmed', confirmations: 1, buildId })
  devnet.produceBlock()
  expect((await POST(`${TX}/GetTransactionStatus`, { txHash })).data.confirmations).toBe(2)
  const onChain = await GET(`${READ}/Transactions('${txHash}')`)
  expect(onChain.status).toBe(200)
  expect(onChain.data.hash).toBe(txHash)
}
