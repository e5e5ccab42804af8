import { registerAnalytics } from '../analytics.ts'
import { serve } from '../server.ts'
import { registerBuildTools } from './build.ts'
import { registerReadTools } from './read.ts'
import { registerSignTools } from './sign.ts'
import { registerSubmitTools } from './submit.ts'

await serve({
  name: 'chain-access-chain-a',
  instructions: [
    'Chain A (Cardano) through the chain-access gateway, with the key this server was started with: read the chain, build unsigned transactions, have them signed outside, submit them and follow them to confirmation, and look at the chain\'s analytics.',
    'Read: get_transaction, get_utxos, get_asset_info, and query_entity for any entity set of the read service (blocks, epochs, pools, accounts, DReps, address transactions…) with OData options.',
    'Write, in this order: 1. build_ada_transfer, build_mint_transaction or build_plutus_spend answers a build (its ID, txHash, fee, unsignedTxCbor). 2. create_signing_request with the buildId answers howToSign: the unsigned transaction and exactly how to have it signed (a CIP-30 wallet\'s signTx, a cardano-cli command, or on the devnet the development signer). 3. The holder of the sender\'s key signs it outside this server: the server never holds keys and never asks for one. 4. submit_signed_transaction with the signingRequestId and the signer\'s answer (verify_signature checks an answer without submitting). 5. get_submission_status with the submissionId and waitSeconds until it is confirmed; then get_transaction reads it.',
    'Amounts are integer strings of lovelace (1 ADA = "1000000"); addresses are bech32 (addr_test1… on test networks and the devnet). Every call is metered on the hosted gateway: each answer says the units it cost and the units left. A refusal says what to do (a new key, a top-up, a retry time, or the service\'s code and message).',
    'Analytics: analytics_overview, analytics_key_figures, analytics_daily, analytics_top, analytics_anomalies.',
  ].join('\n'),
  register(server, client) {
    registerReadTools(server, client)
    registerBuildTools(server, client)
    registerSignTools(server, client)
    registerSubmitTools(server, client)
    registerAnalytics(server, client, 'chain-a')
  },
})
