using { chainatx as db } from '../../db/chain-a-tx';
using { common } from '../../db/common';

/**
 * Chain-A transactions: unsigned builds (ADA, multi-asset, native-token mint and burn, metadata,
 * Plutus V3 spend) with two builder backends (`csl`, `buildooor`), submission of signed
 * transactions, and their status up to on-chain confirmation. Amounts are integer strings of
 * lovelace; JSON parameters are JSON-encoded strings.
 */
@path: 'chaina-transaction'
@requires: 'authenticated-user'
service ChainATransactionService {

  /** A build's status as it stands: expired once its validity has passed, built again once a signing claim lapsed. */
  @readonly entity TransactionBuilds       as projection on db.TransactionBuilds {
    *,
    case
      when status in ('built', 'signing') and expiresAt < $now then 'expired'
      when status = 'signing' and signingUntil < $now then 'built'
      else status
    end as status : db.TransactionBuilds:status
  } excluding { requestJson };
  @readonly entity TransactionSubmissions  as projection on db.TransactionSubmissions;
  @readonly entity BuildInputs             as projection on db.BuildInputs;
  @readonly entity BuildOutputs            as projection on db.BuildOutputs;
  @readonly entity BuildAssets             as projection on db.BuildAssets;
  @readonly entity BuildMetadata           as projection on db.BuildMetadata;
  @readonly entity ProtocolParametersCache as projection on db.ProtocolParametersCache;
  @readonly entity NetworkParametersCache  as projection on db.NetworkParametersCache;

  type TransactionStatus {
    txHash        : String(64);
    /** unknown | pending | submitted | confirmed | failed */
    status        : String(12);
    confirmations : Integer;
    blockHeight   : Integer;
    blockHash     : String(64);
    blockTime     : Timestamp;
    submissionId  : UUID;
    buildId       : UUID;
    errorMessage  : String(2000);
  }

  type FeeEstimate {
    fee        : String(20);
    size       : Integer;
    inputCount : Integer;
    builder    : String(20);
  }

  type AddressValidation {
    address   : String(200);
    valid     : Boolean;
    /** mainnet | testnet */
    network   : String(10);
    /** base | enterprise | pointer | reward | byron */
    type      : String(20);
    isScript  : Boolean;
    /** Whether the address belongs to the network this deployment serves. */
    usable    : Boolean;
    errorCode : String(40);
    message   : String(300);
  }

  action BuildSimpleAdaTransaction(senderAddress : String, recipientAddress : String, lovelaceAmount : String, changeAddress : String, datumJson : common.JsonText, builder : String) returns TransactionBuilds;
  action BuildMultiAssetTransaction(senderAddress : String, recipientAddress : String, lovelaceAmount : String, assetsJson : common.JsonText, changeAddress : String, builder : String) returns TransactionBuilds;
  action BuildTokenMintTransaction(senderAddress : String, recipientAddress : String, mintActionsJson : common.JsonText, mintingPolicyScript : common.JsonText, metadataJson : common.JsonText, lovelaceAmount : String, changeAddress : String, builder : String) returns TransactionBuilds;
  action BuildMetadataTransaction(senderAddress : String, metadataJson : common.JsonText, message : LargeString, recipientAddress : String, lovelaceAmount : String, changeAddress : String, builder : String) returns TransactionBuilds;
  action BuildPlutusSpendTransaction(senderAddress : String, validatorScript : LargeString, scriptTxHash : String, scriptOutputIndex : Integer, redeemerJson : common.JsonText, datumJson : common.JsonText, recipientAddress : String, lovelaceAmount : String, changeAddress : String, builder : String) returns TransactionBuilds;
  action SubmitSignedTransaction(signedTxCbor : LargeString, buildId : UUID) returns TransactionSubmissions;
  action GetBuildStatus(buildId : UUID @mandatory) returns TransactionBuilds;
  action GetTransactionStatus(txHash : String) returns TransactionStatus;
  action CancelBuild(buildId : UUID @mandatory) returns TransactionBuilds;
  action RebuildTransaction(buildId : UUID @mandatory, builder : String) returns TransactionBuilds;
  action EstimateFee(senderAddress : String, recipientAddress : String, lovelaceAmount : String, assetsJson : common.JsonText, metadataJson : common.JsonText, builder : String) returns FeeEstimate;
  action ValidateAddresses(addresses : many String) returns many AddressValidation;

  /** A signed transaction was accepted by the ledger: what it spent and whose balances it changes. */
  event TransactionSubmitted {
    txHash    : String(64);
    spent     : many String;
    addresses : many String;
  }

}
