/**
 * Chain-B index: what the chain-B follower (srv/chainb-indexer) has read from the upstream indexer,
 * block by block from genesis to the tip, rolled back and read again on a reorg. Owned by the
 * indexer service; the chain-B service reads it. Fees and values are Decimal(38,0) (JSON strings
 * in OData); hashes and contract addresses lowercase hex, unshielded addresses Bech32m as the
 * indexer gives them (`mn_addr_preprod1…`); times are timestamps (UTC).
 */
using { common } from './common';

namespace chainb;

type Hex64  : String(64);
type HexLong : String(512);
/** Bech32m `mn_addr_<network>1…` of a 32-byte address: 67 characters and the network id's. */
type UnshieldedAddress : String(120);
type Amount : Decimal(38, 0);

@assert.unique: { height: [height] }
@db.indexes: ['timestamp', 'epoch']
entity Blocks {
  key hash            : Hex64;
      height          : Integer not null;
      protocolVersion : Integer;
      timestamp       : Timestamp;
      /** The block's author: one key of the producer set, hex. */
      author          : HexLong;
      parentHash      : Hex64;
      epoch           : Integer;
      txCount         : Integer;
      /** True once the block is deeper than the finality depth. */
      finalized       : Boolean default false;
      transactions    : Composition of many Transactions on transactions.block = $self;
}

@db.indexes: ['blockHeight']
entity Transactions {
  key hash              : Hex64;
      block             : Association to Blocks;
      blockHeight       : Integer;
      /** The indexer's numeric id of the transaction. */
      transactionId     : Integer;
      /** regular or system. */
      transactionType   : String(8) enum { regular; system };
      protocolVersion   : Integer;
      /** The last ledger identifier: what identifies a submission. */
      identifier        : HexLong;
      /** SUCCESS, PARTIAL_SUCCESS or FAILURE (regular transactions). */
      status            : String(16) enum { SUCCESS; PARTIAL_SUCCESS; FAILURE };
      paidFees          : Amount;
      estimatedFees     : Amount;
      merkleTreeRoot    : HexLong;
      startIndex        : Integer;
      endIndex          : Integer;
      /** True when the transaction carries zswap ledger events: a shielded transfer, contents hidden. */
      isShielded        : Boolean;
      zswapEventCount   : Integer;
      unshieldedInputs  : Integer;
      unshieldedOutputs : Integer;
      segments          : Composition of many TransactionSegments on segments.transaction = $self;
      contractActions   : Composition of many ContractActions on contractActions.transaction = $self;
}

entity TransactionSegments {
  key transaction : Association to Transactions;
  key segmentId   : Integer;
      success     : Boolean;
}

@db.indexes: ['blockHeight']
entity ContractActions {
  key transaction : Association to Transactions;
  key position    : Integer;
      address     : Hex64;
      /** ContractDeploy, ContractCall or ContractUpdate. */
      actionType  : String(16) enum { ContractDeploy; ContractCall; ContractUpdate };
      /** The circuit called. */
      entryPoint  : String(64);
      blockHeight : Integer;
}

@db.indexes: ['createdAtTransaction_hash', 'spentAtTransaction_hash']
entity UnshieldedUtxos {
  key intentHash           : Hex64;
  key outputIndex          : Integer;
      owner                : UnshieldedAddress;
      tokenType            : Hex64;
      value                : Amount;
      createdAtTransaction : Association to Transactions;
      spentAtTransaction   : Association to Transactions;
}

/** One row: where the follower stands. */
entity SyncState : common.FollowedChain, common.FollowerProgress {
  key ID : String(10) default 'chain-b';
}

entity ReorgLog : common.ReorgEntry {}
