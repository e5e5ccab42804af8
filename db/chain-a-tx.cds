using { chaina } from './chain-a';
using { common } from './common';

/**
 * Chain-A transaction building and submission: unsigned builds with what they spend and create,
 * the outputs they reserve until they are settled, and the submissions of signed transactions.
 */
namespace chainatx;

/** What a build makes: the build action it came from. */
type BuildKind : String(20) enum { ada; multiAsset; mint; metadata; plutusSpend };

/** Owned by the caller that built it (a rebuild keeps the owner); see db/common.cds. */
entity TransactionBuilds : common.Owned {
  key ID               : UUID;
      /**
       * built → signing (a signing request claimed it) → submitted → confirmed, or it ends failed
       * (the ledger rejected it), cancelled (CancelBuild) or expired (its validity passed). A claim
       * lapses with the request's expiry, and the build is built again. The expiry job brings the
       * stored status up to date; reads answer the status as it stands (see the service).
       */
      status           : String(12) enum { built; signing; submitted; confirmed; failed; cancelled; expired } not null default 'built';
      kind             : BuildKind not null;
      builder          : String(20) not null;
      network          : String(16);
      senderAddress    : chaina.Bech32;
      recipientAddress : chaina.Bech32;
      changeAddress    : chaina.Bech32;
      lovelaceAmount   : chaina.Lovelace;
      /** The transaction id: the hash of the body, which signing does not change. */
      txHash           : chaina.Hash32;
      unsignedTxCbor   : LargeString;
      fee              : chaina.Lovelace;
      size             : Integer;
      invalidBefore    : Int64;
      invalidHereafter : Int64;
      /** When the validity interval ends (the build expires unless submitted before). */
      expiresAt        : Timestamp;
      /** While signing: when the signing request's claim lapses (its expiry), never after expiresAt. */
      signingUntil     : Timestamp;
      /** The signing request that claimed the build (an id of the signing service's). */
      claimedBy        : UUID;
      requiredSigners  : LargeString;
      /** The build's parameters as JSON, so RebuildTransaction can build it again. */
      requestJson      : LargeString;
      rebuiltFrom      : UUID;
      failureReason    : String(2000);
      createdAt        : Timestamp;
      updatedAt        : Timestamp;
      inputs           : Composition of many BuildInputs on inputs.build = $self;
      outputs          : Composition of many BuildOutputs on outputs.build = $self;
      assets           : Composition of many BuildAssets on assets.build = $self;
      metadata         : Composition of many BuildMetadata on metadata.build = $self;
      submissions      : Association to many TransactionSubmissions on submissions.build = $self;
}

entity BuildInputs {
  key build        : Association to TransactionBuilds;
  key inputIndex   : Integer;
      txHash       : chaina.Hash32;
      outputIndex  : Integer;
      address      : chaina.Bech32;
      lovelace     : chaina.Lovelace;
      isScript     : Boolean;
      isCollateral : Boolean;
}

entity BuildOutputs {
  key build       : Association to TransactionBuilds;
  key outputIndex : Integer;
      address     : chaina.Bech32;
      lovelace    : chaina.Lovelace;
      isChange    : Boolean;
      datumHash   : chaina.Hash32;
      inlineDatum : LargeString;
}

/** Native assets a build spends (input), creates (output) or mints and burns (mint). */
entity BuildAssets : chaina.AssetFields {
  key build     : Association to TransactionBuilds;
  /** input | output | mint */
  key role      : String(10);
  /** The input or output index; 0 for mint. */
  key position  : Integer;
  key unit      : chaina.Unit;
}

entity BuildMetadata {
  key build   : Association to TransactionBuilds;
  key label   : String(20);
      payload : LargeString;
}

/**
 * The outputs an owner's pending build spends, so no other pending build of the same owner selects
 * them. One row per owner and output: the key makes a double selection impossible even between
 * concurrent builds of one owner, and no owner's builds ever exclude another owner's.
 */
entity SpendLocks {
  /** The build's owner. */
  key owner       : common.Owner;
  key txHash      : chaina.Hash32;
  key outputIndex : Integer;
      build       : Association to TransactionBuilds not null;
      address     : chaina.Bech32;
      /**
       * The lock lapses after CHAIN_A_SPEND_LOCK_S, or when the build's signing request expires if it
       * has one, or with the build's validity once it is submitted; never after the build's validity.
       */
      expiresAt   : Timestamp;
}

/** One submission per owner and transaction; another owner's submission of it is that owner's own. */
@assert.unique: { transaction: [owner, txHash] }
entity TransactionSubmissions : common.Owned {
  key ID             : UUID;
      build          : Association to TransactionBuilds;
      txHash         : chaina.Hash32 not null;
      status         : String(12) enum { pending; submitted; confirmed; failed } not null default 'pending';
      signedTxCbor   : LargeString;
      /** The ledger's reason when it rejected the transaction. */
      errorCode      : String(40);
      errorMessage   : String(2000);
      submittedAt    : Timestamp;
      confirmedAt    : Timestamp;
      blockHeight    : Integer;
      blockHash      : chaina.Hash32;
}

/** Protocol parameters the builds used, as fetched from the upstream. */
entity ProtocolParametersCache {
  key epoch            : Integer;
      minFeeA          : Integer;
      minFeeB          : Integer;
      maxTxSize        : Integer;
      coinsPerUtxoSize : chaina.Lovelace;
      keyDeposit       : chaina.Lovelace;
      priceMem         : Double;
      priceStep        : Double;
      maxTxExMem       : Int64;
      maxTxExSteps     : Int64;
      collateralPercent : Integer;
      maxCollateralInputs : Integer;
      costModels       : LargeString;
      fetchedAt        : Timestamp;
}

/** The network the builds are made for, as fetched from the upstream's genesis. */
entity NetworkParametersCache {
  key network       : String(16);
      networkId     : Integer;
      networkMagic  : Integer;
      systemStart   : Timestamp;
      slotLength    : Integer;
      epochLength   : Integer;
      securityParam : Integer;
      fetchedAt     : Timestamp;
}
