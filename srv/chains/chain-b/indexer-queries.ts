/**
 * The GraphQL documents the chain-B adapter sends to an indexer (schema v4). A test validates each
 * of them against indexer-schema.graphql, the subset of the published schema the devnet serves.
 */

const UTXO_FIELDS = `fragment UtxoFields on UnshieldedUtxo { owner tokenType value intentHash outputIndex }`

/** A contract action in a block or transaction: without the contract's state, which only `contractAction` asks for. */
const ACTION_FIELDS = `fragment ActionFields on ContractAction {
  __typename address
  ... on ContractCall { entryPoint }
}`

const TRANSACTION_FIELDS = `fragment TransactionFields on Transaction {
  __typename id hash protocolVersion
  contractActions { ...ActionFields }
  unshieldedCreatedOutputs { ...UtxoFields }
  unshieldedSpentOutputs { ...UtxoFields }
  zswapLedgerEvents { id }
  ... on RegularTransaction {
    identifiers
    transactionResult { status segments { id success } }
    fees { paidFees estimatedFees }
    zswapMerkleTreeRoot zswapStartIndex zswapEndIndex
  }
}`

const BLOCK_FIELDS = `fragment BlockFields on Block {
  hash height protocolVersion timestamp author
  parent { hash }
  transactions { ...TransactionFields }
}`

const BLOCK_FRAGMENTS = [BLOCK_FIELDS, TRANSACTION_FIELDS, ACTION_FIELDS, UTXO_FIELDS].join('\n')

export const BLOCK_QUERY = `query ChainBBlock($offset: BlockOffset) {
  block(offset: $offset) { ...BlockFields }
}
${BLOCK_FRAGMENTS}`

export const TRANSACTIONS_QUERY = `query ChainBTransactions($offset: TransactionOffset!) {
  transactions(offset: $offset) { ...TransactionFields block { height hash timestamp } }
}
${[TRANSACTION_FIELDS, ACTION_FIELDS, UTXO_FIELDS].join('\n')}`

export const CONTRACT_ACTION_QUERY = `query ChainBContractAction($address: HexEncoded!, $offset: ContractActionOffset) {
  contractAction(address: $address, offset: $offset) { ...ActionFields state transaction { id hash } }
}
${ACTION_FIELDS}`

export const CONTRACT_STATE_VERSION_QUERY = `query ChainBContractStateVersion($address: HexEncoded!) {
  contractAction(address: $address) { transaction { id hash } }
}`

export const EPOCH_QUERY = `query ChainBEpoch {
  currentEpochInfo { epochNo durationSeconds elapsedSeconds }
}`

export const BLOCKS_SUBSCRIPTION = `subscription ChainBBlocks($offset: BlockOffset) {
  blocks(offset: $offset) { ...BlockFields }
}
${BLOCK_FRAGMENTS}`

const CONTRACT_ACTIONS_SUBSCRIPTION = `subscription ChainBContractActions($address: HexEncoded!, $offset: BlockOffset) {
  contractActions(address: $address, offset: $offset) { ...ActionFields state transaction { hash block { height } } }
}
${ACTION_FIELDS}`

/** Every document the adapter sends, by name (for the schema test). */
export const ADAPTER_DOCUMENTS = { BLOCK_QUERY, TRANSACTIONS_QUERY, CONTRACT_ACTION_QUERY, CONTRACT_STATE_VERSION_QUERY, EPOCH_QUERY, BLOCKS_SUBSCRIPTION, CONTRACT_ACTIONS_SUBSCRIPTION }

/** What those documents answer, as the indexer sends it. */
export interface WireUtxo { owner: string; tokenType: string; value: string; intentHash: string; outputIndex: number }
export interface WireAction { __typename: 'ContractDeploy' | 'ContractCall' | 'ContractUpdate'; address: string; state?: string; entryPoint?: string; transaction?: { id: number; hash: string } }
export interface WireTransaction {
  __typename: 'RegularTransaction' | 'SystemTransaction'
  id: number
  hash: string
  protocolVersion: number
  contractActions: WireAction[]
  unshieldedCreatedOutputs: WireUtxo[]
  unshieldedSpentOutputs: WireUtxo[]
  zswapLedgerEvents: { id: number }[]
  identifiers?: string[]
  transactionResult?: { status: 'SUCCESS' | 'PARTIAL_SUCCESS' | 'FAILURE'; segments: { id: number; success: boolean }[] | null }
  fees?: { paidFees: string; estimatedFees: string }
  zswapMerkleTreeRoot?: string
  zswapStartIndex?: number
  zswapEndIndex?: number
  /** `timestamp` in Unix milliseconds, as for a block. */
  block?: { height: number; hash: string; timestamp: number }
}
export interface WireBlock {
  hash: string
  height: number
  protocolVersion: number
  /** Unix milliseconds: the node's block time, which the indexer gives as it is. */
  timestamp: number
  author: string | null
  parent: { hash: string } | null
  transactions: WireTransaction[]
}
