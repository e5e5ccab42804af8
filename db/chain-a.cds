/**
 * Chain-A read cache: what the read service has indexed lazily from the upstream.
 * Amounts of lovelace are Decimal(20,0) and asset quantities Decimal(38,0), exact on SQLite and
 * PostgreSQL and JSON strings in OData;
 * times are timestamps (UTC); slots and heights are integers.
 */
using { common } from './common';

namespace chaina;

type Hash32   : String(64);
type Hash28   : String(56);
type Bech32   : String(120);
type Lovelace : Decimal(20, 0);
type Quantity : Decimal(38, 0);
type Unit     : String(120);

/** Fields every native-asset row carries. */
aspect AssetFields {
  policyId     : Hash28;
  assetNameHex : String(64);
  /** The asset name as UTF-8 text when it is printable, else null. */
  assetName    : String(64);
  /** CIP-14 fingerprint (asset1...). */
  fingerprint  : String(44);
  quantity     : Quantity;
}

entity NetworkInformation {
  key network                : String(16);
      maxSupply              : Lovelace;
      totalSupply            : Lovelace;
      circulatingSupply      : Lovelace;
      lockedSupply           : Lovelace;
      treasurySupply         : Lovelace;
      reservesSupply         : Lovelace;
      liveStake              : Lovelace;
      activeStake            : Lovelace;
      networkMagic           : Integer;
      systemStart            : Timestamp;
      epochLength            : Integer;
      slotLength             : Integer;
      securityParam          : Integer;
      activeSlotsCoefficient : Double;
      updateQuorum           : Integer;
      maxLovelaceSupply      : Lovelace;
      slotsPerKesPeriod      : Integer;
      maxKesEvolutions       : Integer;
      fetchedAt              : Timestamp;
}

entity Epochs {
  key epoch          : Integer;
      startTime      : Timestamp;
      endTime        : Timestamp;
      firstBlockTime : Timestamp;
      lastBlockTime  : Timestamp;
      blockCount     : Integer;
      txCount        : Integer;
      output         : Lovelace;
      fees           : Lovelace;
      activeStake    : Lovelace;
      parameters     : Association to LedgerProtocolParameters on parameters.epoch = epoch;
      blocks         : Association to many Blocks on blocks.epoch = epoch;
}

@db.indexes: ['time', 'epoch']
entity Blocks {
  key hash          : Hash32;
      height        : Integer;
      slot          : Integer;
      epoch         : Integer;
      epochSlot     : Integer;
      time          : Timestamp;
      slotLeader    : Bech32;
      size          : Integer;
      txCount       : Integer;
      output        : Lovelace;
      fees          : Lovelace;
      previousBlock : Hash32;
      epochInfo     : Association to Epochs on epochInfo.epoch = epoch;
      transactions  : Association to many Transactions on transactions.blockHash = hash;
}

@db.indexes: ['blockHash']
entity Transactions {
  key hash                 : Hash32;
      blockHash            : Hash32;
      blockHeight          : Integer;
      blockTime            : Timestamp;
      slot                 : Integer;
      txIndex              : Integer;
      fee                  : Lovelace;
      deposit              : Lovelace;
      size                 : Integer;
      invalidBefore        : Int64;
      invalidHereafter     : Int64;
      validContract        : Boolean;
      inputCount           : Integer;
      outputCount          : Integer;
      assetMintOrBurnCount : Integer;
      withdrawalCount      : Integer;
      delegationCount      : Integer;
      stakeCertCount       : Integer;
      redeemerCount        : Integer;
      hasMetadata          : Boolean;
      block                : Association to Blocks on block.hash = blockHash;
      inputs               : Association to many TransactionInputs on inputs.txHash = hash;
      outputs              : Association to many TransactionOutputs on outputs.txHash = hash;
      metadata             : Association to many TransactionMetadata on metadata.txHash = hash;
}

entity TransactionInputs {
  key txHash              : Hash32;
  key inputIndex          : Integer;
      address             : Bech32;
      spentTxHash         : Hash32;
      spentOutputIndex    : Integer;
      lovelace            : Lovelace;
      dataHash            : Hash32;
      inlineDatum         : LargeString;
      referenceScriptHash : Hash28;
      isCollateral        : Boolean;
      isReference         : Boolean;
      transaction         : Association to Transactions on transaction.hash = txHash;
      assets              : Association to many TransactionInputAssets on assets.txHash = txHash and assets.inputIndex = inputIndex;
}

entity TransactionOutputs {
  key txHash              : Hash32;
  key outputIndex         : Integer;
      address             : Bech32;
      lovelace            : Lovelace;
      dataHash            : Hash32;
      inlineDatum         : LargeString;
      referenceScriptHash : Hash28;
      isCollateral        : Boolean;
      transaction         : Association to Transactions on transaction.hash = txHash;
      assets              : Association to many TransactionOutputAssets on assets.txHash = txHash and assets.outputIndex = outputIndex;
}

entity TransactionInputAssets : AssetFields {
  key txHash     : Hash32;
  key inputIndex : Integer;
  key unit       : Unit;
      input      : Association to TransactionInputs on input.txHash = txHash and input.inputIndex = inputIndex;
}

entity TransactionOutputAssets : AssetFields {
  key txHash      : Hash32;
  key outputIndex : Integer;
  key unit        : Unit;
      output      : Association to TransactionOutputs on output.txHash = txHash and output.outputIndex = outputIndex;
}

entity TransactionMetadata {
  key txHash      : Hash32;
  /** Metadata label (unsigned 64-bit) as decimal text, e.g. '674' for CIP-20 messages. */
  key label       : String(20);
      /** The label's value as JSON text. */
      payload     : LargeString;
      transaction : Association to Transactions on transaction.hash = txHash;
}

entity Addresses {
  key address       : Bech32;
      stakeAddress  : Bech32;
      /** base | enterprise | pointer | reward | byron, with script payment credentials noted in isScript. */
      type          : String(20);
      isScript      : Boolean;
      totalLovelace : Lovelace;
      utxoCount     : Integer;
      assetCount    : Integer;
      fetchedAt     : Timestamp;
      account       : Association to Accounts on account.stakeAddress = stakeAddress;
      utxos         : Association to many AddressUTxOs on utxos.address = address;
      assets        : Association to many AddressAssets on assets.address = address;
      transactions  : Association to many AddressTransactions on transactions.address = address;
}

entity AddressAssets : AssetFields {
  key address : Bech32;
  key unit    : Unit;
      owner   : Association to Addresses on owner.address = address;
}

entity AddressUTxOs {
  key txHash              : Hash32;
  key outputIndex         : Integer;
      address             : Bech32;
      lovelace            : Lovelace;
      blockHash           : Hash32;
      dataHash            : Hash32;
      inlineDatum         : LargeString;
      referenceScriptHash : Hash28;
      owner               : Association to Addresses on owner.address = address;
      assets              : Association to many UTxOAssets on assets.txHash = txHash and assets.outputIndex = outputIndex;
}

entity UTxOAssets : AssetFields {
  key txHash      : Hash32;
  key outputIndex : Integer;
  key unit        : Unit;
      address     : Bech32;
      utxo        : Association to AddressUTxOs on utxo.txHash = txHash and utxo.outputIndex = outputIndex;
}

entity AddressTransactions {
  key address     : Bech32;
  key txHash      : Hash32;
      txIndex     : Integer;
      blockHeight : Integer;
      blockTime   : Timestamp;
      owner       : Association to Addresses on owner.address = address;
      transaction : Association to Transactions on transaction.hash = txHash;
}

entity Accounts {
  key stakeAddress       : Bech32;
      active             : Boolean;
      activeEpoch        : Integer;
      controlledAmount   : Lovelace;
      rewardsSum         : Lovelace;
      withdrawalsSum     : Lovelace;
      reservesSum        : Lovelace;
      treasurySum        : Lovelace;
      withdrawableAmount : Lovelace;
      poolId             : Bech32;
      drepId             : Bech32;
      fetchedAt          : Timestamp;
      pool               : Association to Pools on pool.poolId = poolId;
      drep               : Association to Dreps on drep.drepId = drepId;
      addresses          : Association to many Addresses on addresses.stakeAddress = stakeAddress;
}

entity Pools {
  key poolId         : Bech32;
      hex            : Hash28;
      vrfKey         : Hash32;
      ticker         : String(10);
      name           : String(100);
      homepage       : String(300);
      description    : String(500);
      blocksMinted   : Integer;
      blocksEpoch    : Integer;
      liveStake      : Lovelace;
      liveSize       : Double;
      liveSaturation : Double;
      liveDelegators : Integer;
      activeStake    : Lovelace;
      activeSize     : Double;
      pledge         : Lovelace;
      livePledge     : Lovelace;
      margin         : Double;
      fixedCost      : Lovelace;
      rewardAccount  : Bech32;
      /** Owner stake addresses as a JSON array. */
      owners         : LargeString;
      retiring       : Boolean;
      /** Position in the chain's list of registered pools (registration order, from 0); null until the list is read. */
      position       : Integer;
      fetchedAt      : Timestamp;
      delegators     : Association to many Accounts on delegators.poolId = poolId;
}

entity Dreps {
  key drepId          : Bech32;
      hex             : Hash28;
      amount          : Lovelace;
      hasScript       : Boolean;
      retired         : Boolean;
      expired         : Boolean;
      lastActiveEpoch : Integer;
      /** Position in the chain's list of DReps (registration order, from 0); null until the list is read. */
      position        : Integer;
      fetchedAt       : Timestamp;
      delegators      : Association to many Accounts on delegators.drepId = drepId;
}

entity LedgerProtocolParameters {
  key epoch                      : Integer;
      minFeeA                    : Integer;
      minFeeB                    : Integer;
      maxBlockSize               : Integer;
      maxTxSize                  : Integer;
      maxBlockHeaderSize         : Integer;
      keyDeposit                 : Lovelace;
      poolDeposit                : Lovelace;
      eMax                       : Integer;
      nOpt                       : Integer;
      a0                         : Double;
      rho                        : Double;
      tau                        : Double;
      protocolMajorVer           : Integer;
      protocolMinorVer           : Integer;
      minPoolCost                : Lovelace;
      coinsPerUtxoSize           : Lovelace;
      priceMem                   : Double;
      priceStep                  : Double;
      maxTxExMem                 : Int64;
      maxTxExSteps               : Int64;
      maxBlockExMem              : Int64;
      maxBlockExSteps            : Int64;
      maxValSize                 : Int64;
      collateralPercent          : Integer;
      maxCollateralInputs        : Integer;
      govActionDeposit           : Lovelace;
      drepDeposit                : Lovelace;
      minFeeRefScriptCostPerByte : Double;
      /** Cost models per Plutus language as JSON text. */
      costModels                 : LargeString;
      fetchedAt                  : Timestamp;
      epochInfo                  : Association to Epochs on epochInfo.epoch = epoch;
}

/** Mint and burn events of a native asset, newest first by `position`. */
entity AssetHistory {
  key unit     : Unit;
  key txHash   : Hash32;
      position : Integer;
      action      : String(10);
      amount      : Quantity;
      transaction : Association to Transactions on transaction.hash = txHash;
}

/**
 * When each piece of upstream data was last indexed. `final` marks data that can no longer change
 * (deeper than the security parameter): it is never fetched again.
 */
entity IndexMarks {
  key kind      : String(30);
  key id        : String(200);
      fetchedAt : Timestamp;
      final     : Boolean default false;
      /** For a page of an upstream list: how many items it held (fewer than a full page ends the list). */
      items     : Integer;
}

/**
 * The keys an upstream list holds, by position: a block's transactions, an epoch's blocks, a
 * pool's or DRep's delegators, a stake account's addresses. `kind` names the list and the order it
 * was read in; the listed items themselves are indexed only when a read's answer needs them.
 */
entity ListEntries {
  key kind     : String(40);
  key parent   : String(120);
  key position : Integer;
      item     : String(120);
}

/**
 * One row: where chain A's follower stands. The follower reads every block from its start height to
 * the tip into Blocks and Transactions (with their inputs and outputs), so tip-near reads and the
 * analytics answer from the index; the same shape as chain B's SyncState.
 */
entity SyncState : common.FollowedChain, FollowedFrom, common.FollowerProgress {
  key ID : String(10) default 'chain-a';
}

aspect FollowedFrom {
  /** The first height the follower read (where it started). */
  startHeight : Integer;
}

entity ReorgLog : common.ReorgEntry {}
