using { chaina as db } from '../../db/chain-a';

/**
 * Chain-A read service: blocks, transactions, addresses, UTxOs, assets, pools, accounts, DReps.
 * Read-only; data is indexed lazily from the upstream on a keyed read, a navigation, an $expand or
 * an action, and refreshed after its TTL. Collections the upstream lists (pools, DReps, epochs,
 * blocks by height, a block's transactions, an address's transactions, delegators...) are read
 * from its list endpoints as far as the answer's $skip and $top reach; other collection reads
 * answer from what is indexed (see srv/chaina-odata/read-index.ts).
 */
@path: 'chaina-odata'
@requires: 'authenticated-user'
service ChainAReadService {

  @readonly entity NetworkInformation       as projection on db.NetworkInformation excluding { fetchedAt };
  @readonly entity Blocks                   as projection on db.Blocks;
  @readonly entity Epochs                   as projection on db.Epochs;
  @readonly entity Transactions             as projection on db.Transactions;
  @readonly entity TransactionInputs        as projection on db.TransactionInputs;
  @readonly entity TransactionOutputs       as projection on db.TransactionOutputs;
  @readonly entity TransactionInputAssets   as projection on db.TransactionInputAssets;
  @readonly entity TransactionOutputAssets  as projection on db.TransactionOutputAssets;
  @readonly entity TransactionMetadata      as projection on db.TransactionMetadata;
  @readonly entity Addresses                as projection on db.Addresses;
  @readonly entity AddressAssets            as projection on db.AddressAssets;
  @readonly entity AddressUTxOs             as projection on db.AddressUTxOs;
  @readonly entity AddressTransactions      as projection on db.AddressTransactions;
  @readonly entity UTxOAssets               as projection on db.UTxOAssets;
  @readonly entity Pools                    as projection on db.Pools;
  @readonly entity Accounts                 as projection on db.Accounts;
  @readonly entity Dreps                    as projection on db.Dreps;
  @readonly entity LedgerProtocolParameters as projection on db.LedgerProtocolParameters excluding { fetchedAt };
  @readonly entity AssetHistory             as projection on db.AssetHistory;

  action GetTransactionByHash(hash : String)                             returns Transactions;
  action GetAddressByBech32(address : String)                            returns Addresses;
  action GetUTxOsByAddress(address : String)                             returns many AddressUTxOs;
  action GetAssetsByAddress(address : String)                            returns many AddressAssets;
  action GetMetadataByTxHash(tx_hash : String)                           returns many TransactionMetadata;
  action GetPoolById(poolId : String)                                    returns Pools;
  action GetAccountByStakeAddress(stakeAddress : String)                 returns Accounts;
  action GetDrepById(drepId : String)                                    returns Dreps;
  action GetTransactionsByAddress(address : String)                      returns many AddressTransactions;
  action GetAssetHistory(unit : String)                                  returns many AssetHistory;
  action GetUTxOByRef(txHash : String, outputIndex : Integer)            returns AddressUTxOs;
  action GetInputsByTxHash(hash : String)                                returns many TransactionInputs;
  action GetOutputsByTxHash(hash : String)                               returns many TransactionOutputs;
  action GetInputAssetsByTxHash(hash : String)                           returns many TransactionInputAssets;
  action GetOutputAssetsByTxHash(hash : String)                          returns many TransactionOutputAssets;
}
