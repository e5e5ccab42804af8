using ChainAReadService as service from '../../srv/chaina-odata/service';

// List and object pages for Fiori-style clients of the chain-A read service: which columns a list
// shows, what one filters by, each object page's header and sections, the labels of the
// properties, and value lists where a property names a row of another entity set (a block's slot
// leader is a pool, an output's address an address...). Amounts are lovelace.

// ---------------------------------------------------------------------------------------------
// Blocks and epochs

annotate service.Blocks with @(
  UI.HeaderInfo : { TypeName: 'Block', TypeNamePlural: 'Blocks', Title: { Value: height }, Description: { Value: hash } },
  UI.SelectionFields : [ epoch, slotLeader ],
  UI.LineItem : [
    { Value: height }, { Value: time }, { Value: epoch }, { Value: slot }, { Value: txCount }, { Value: fees }, { Value: hash }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: height, Descending: true } ] },
  UI.FieldGroup #Block : { Data: [
    { Value: hash }, { Value: height }, { Value: time }, { Value: epoch }, { Value: slot }, { Value: epochSlot },
    { Value: slotLeader }, { Value: size }, { Value: txCount }, { Value: output }, { Value: fees }, { Value: previousBlock }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Block', Label: 'Block', Target: '@UI.FieldGroup#Block' },
    { $Type: 'UI.ReferenceFacet', ID: 'Transactions', Label: 'Transactions', Target: 'transactions/@UI.LineItem' }
  ]
) {
  hash          @title: 'Block Hash';
  height        @title: 'Height';
  slot          @title: 'Slot';
  epoch         @title: 'Epoch'  @Common.ValueList: {
    Label: 'Epochs', CollectionPath: 'Epochs',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: epoch, ValueListProperty: 'epoch' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'startTime' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'blockCount' }
    ]
  };
  epochSlot     @title: 'Slot in Epoch';
  time          @title: 'Time';
  slotLeader    @title: 'Slot Leader (Pool)'  @Common.ValueList: {
    Label: 'Pools', CollectionPath: 'Pools',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: slotLeader, ValueListProperty: 'poolId' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'ticker' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'name' }
    ]
  };
  size          @title: 'Size (bytes)';
  txCount       @title: 'Transactions';
  output        @title: 'Output (lovelace)';
  fees          @title: 'Fees (lovelace)';
  previousBlock @title: 'Previous Block';
};

annotate service.Epochs with @(
  UI.HeaderInfo : { TypeName: 'Epoch', TypeNamePlural: 'Epochs', Title: { Value: epoch }, Description: { Value: startTime } },
  UI.SelectionFields : [ epoch ],
  UI.LineItem : [
    { Value: epoch }, { Value: startTime }, { Value: endTime }, { Value: blockCount }, { Value: txCount }, { Value: fees }, { Value: activeStake }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: epoch, Descending: true } ] },
  UI.FieldGroup #Epoch : { Data: [
    { Value: epoch }, { Value: startTime }, { Value: endTime }, { Value: firstBlockTime }, { Value: lastBlockTime },
    { Value: blockCount }, { Value: txCount }, { Value: output }, { Value: fees }, { Value: activeStake }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Epoch', Label: 'Epoch', Target: '@UI.FieldGroup#Epoch' },
    { $Type: 'UI.ReferenceFacet', ID: 'Blocks', Label: 'Blocks', Target: 'blocks/@UI.LineItem' }
  ]
) {
  epoch          @title: 'Epoch';
  startTime      @title: 'Start';
  endTime        @title: 'End';
  firstBlockTime @title: 'First Block';
  lastBlockTime  @title: 'Last Block';
  blockCount     @title: 'Blocks';
  txCount        @title: 'Transactions';
  output         @title: 'Output (lovelace)';
  fees           @title: 'Fees (lovelace)';
  activeStake    @title: 'Active Stake (lovelace)';
};

// ---------------------------------------------------------------------------------------------
// Transactions with their inputs, outputs, assets and metadata

annotate service.Transactions with @(
  UI.HeaderInfo : { TypeName: 'Transaction', TypeNamePlural: 'Transactions', Title: { Value: hash }, Description: { Value: blockHeight } },
  UI.SelectionFields : [ blockHeight, blockHash, hasMetadata, validContract ],
  UI.LineItem : [
    { Value: hash }, { Value: blockHeight }, { Value: blockTime }, { Value: fee }, { Value: size }, { Value: inputCount }, { Value: outputCount }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: blockHeight, Descending: true }, { Property: txIndex, Descending: true } ] },
  UI.FieldGroup #Transaction : { Data: [
    { Value: hash }, { Value: blockHash }, { Value: blockHeight }, { Value: blockTime }, { Value: slot }, { Value: txIndex },
    { Value: fee }, { Value: deposit }, { Value: size }, { Value: validContract }, { Value: invalidBefore }, { Value: invalidHereafter }
  ] },
  UI.FieldGroup #Counts : { Data: [
    { Value: inputCount }, { Value: outputCount }, { Value: assetMintOrBurnCount }, { Value: withdrawalCount },
    { Value: delegationCount }, { Value: stakeCertCount }, { Value: redeemerCount }, { Value: hasMetadata }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Transaction', Label: 'Transaction', Target: '@UI.FieldGroup#Transaction' },
    { $Type: 'UI.ReferenceFacet', ID: 'Counts', Label: 'Contents', Target: '@UI.FieldGroup#Counts' },
    { $Type: 'UI.ReferenceFacet', ID: 'Inputs', Label: 'Inputs', Target: 'inputs/@UI.LineItem' },
    { $Type: 'UI.ReferenceFacet', ID: 'Outputs', Label: 'Outputs', Target: 'outputs/@UI.LineItem' },
    { $Type: 'UI.ReferenceFacet', ID: 'Metadata', Label: 'Metadata', Target: 'metadata/@UI.LineItem' }
  ]
) {
  hash                 @title: 'Transaction Hash';
  blockHash            @title: 'Block Hash'  @Common.ValueList: {
    Label: 'Blocks', CollectionPath: 'Blocks',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: blockHash, ValueListProperty: 'hash' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'height' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'time' }
    ]
  };
  blockHeight          @title: 'Block Height';
  blockTime            @title: 'Block Time';
  slot                 @title: 'Slot';
  txIndex              @title: 'Index in Block';
  fee                  @title: 'Fee (lovelace)';
  deposit              @title: 'Deposit (lovelace)';
  size                 @title: 'Size (bytes)';
  invalidBefore        @title: 'Valid From (slot)';
  invalidHereafter     @title: 'Valid Until (slot)';
  validContract        @title: 'Scripts Valid';
  inputCount           @title: 'Inputs';
  outputCount          @title: 'Outputs';
  assetMintOrBurnCount @title: 'Mints and Burns';
  withdrawalCount      @title: 'Withdrawals';
  delegationCount      @title: 'Delegations';
  stakeCertCount       @title: 'Stake Certificates';
  redeemerCount        @title: 'Redeemers';
  hasMetadata          @title: 'Has Metadata';
};

annotate service.TransactionInputs with @(
  UI.HeaderInfo : { TypeName: 'Input', TypeNamePlural: 'Inputs', Title: { Value: inputIndex }, Description: { Value: txHash } },
  UI.LineItem : [ { Value: inputIndex }, { Value: address }, { Value: lovelace }, { Value: spentTxHash }, { Value: spentOutputIndex } ]
) {
  txHash           @title: 'Transaction Hash';
  inputIndex       @title: 'Input';
  address          @title: 'Address'  @Common.ValueList: {
    Label: 'Addresses', CollectionPath: 'Addresses',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: address, ValueListProperty: 'address' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'type' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'totalLovelace' }
    ]
  };
  spentTxHash      @title: 'Spent Transaction';
  spentOutputIndex @title: 'Spent Output';
  lovelace         @title: 'Amount (lovelace)';
  isCollateral     @title: 'Collateral';
  isReference      @title: 'Reference Input';
};

annotate service.TransactionOutputs with @(
  UI.HeaderInfo : { TypeName: 'Output', TypeNamePlural: 'Outputs', Title: { Value: outputIndex }, Description: { Value: txHash } },
  UI.LineItem : [ { Value: outputIndex }, { Value: address }, { Value: lovelace }, { Value: dataHash } ]
) {
  txHash       @title: 'Transaction Hash';
  outputIndex  @title: 'Output';
  address      @title: 'Address'  @Common.ValueList: {
    Label: 'Addresses', CollectionPath: 'Addresses',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: address, ValueListProperty: 'address' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'type' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'totalLovelace' }
    ]
  };
  lovelace     @title: 'Amount (lovelace)';
  dataHash     @title: 'Datum Hash';
  isCollateral @title: 'Collateral Return';
};

annotate service.TransactionMetadata with @(
  UI.HeaderInfo : { TypeName: 'Metadata Label', TypeNamePlural: 'Metadata', Title: { Value: label }, Description: { Value: txHash } },
  UI.LineItem : [ { Value: label }, { Value: payload }, { Value: txHash } ]
) {
  txHash  @title: 'Transaction Hash';
  label   @title: 'Label';
  payload @title: 'Value (JSON)';
};

annotate service.TransactionInputAssets with @(
  UI.HeaderInfo : { TypeName: 'Input Asset', TypeNamePlural: 'Input Assets', Title: { Value: fingerprint }, Description: { Value: assetName } },
  UI.LineItem : [ { Value: inputIndex }, { Value: fingerprint }, { Value: assetName }, { Value: policyId }, { Value: quantity } ]
) {
  txHash       @title: 'Transaction Hash';
  inputIndex   @title: 'Input';
  unit         @title: 'Unit';
  policyId     @title: 'Policy ID';
  assetNameHex @title: 'Asset Name (hex)';
  assetName    @title: 'Asset Name';
  fingerprint  @title: 'Fingerprint';
  quantity     @title: 'Quantity';
};

annotate service.TransactionOutputAssets with @(
  UI.HeaderInfo : { TypeName: 'Output Asset', TypeNamePlural: 'Output Assets', Title: { Value: fingerprint }, Description: { Value: assetName } },
  UI.LineItem : [ { Value: outputIndex }, { Value: fingerprint }, { Value: assetName }, { Value: policyId }, { Value: quantity } ]
) {
  txHash       @title: 'Transaction Hash';
  outputIndex  @title: 'Output';
  unit         @title: 'Unit';
  policyId     @title: 'Policy ID';
  assetNameHex @title: 'Asset Name (hex)';
  assetName    @title: 'Asset Name';
  fingerprint  @title: 'Fingerprint';
  quantity     @title: 'Quantity';
};

// ---------------------------------------------------------------------------------------------
// Addresses, their UTxOs, assets and transactions; stake accounts

annotate service.Addresses with @(
  UI.HeaderInfo : { TypeName: 'Address', TypeNamePlural: 'Addresses', Title: { Value: address }, Description: { Value: type } },
  UI.SelectionFields : [ type, stakeAddress, isScript ],
  UI.LineItem : [ { Value: address }, { Value: type }, { Value: totalLovelace }, { Value: utxoCount }, { Value: assetCount } ],
  UI.FieldGroup #Address : { Data: [
    { Value: address }, { Value: type }, { Value: isScript }, { Value: stakeAddress }, { Value: totalLovelace }, { Value: utxoCount }, { Value: assetCount }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Address', Label: 'Address', Target: '@UI.FieldGroup#Address' },
    { $Type: 'UI.ReferenceFacet', ID: 'UTxOs', Label: 'UTxOs', Target: 'utxos/@UI.LineItem' },
    { $Type: 'UI.ReferenceFacet', ID: 'Assets', Label: 'Assets', Target: 'assets/@UI.LineItem' },
    { $Type: 'UI.ReferenceFacet', ID: 'Transactions', Label: 'Transactions', Target: 'transactions/@UI.LineItem' }
  ]
) {
  address       @title: 'Address';
  stakeAddress  @title: 'Stake Address'  @Common.ValueList: {
    Label: 'Stake Accounts', CollectionPath: 'Accounts',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: stakeAddress, ValueListProperty: 'stakeAddress' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'controlledAmount' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'poolId' }
    ]
  };
  type          @title: 'Type';
  isScript      @title: 'Script Address';
  totalLovelace @title: 'Balance (lovelace)';
  utxoCount     @title: 'UTxOs';
  assetCount    @title: 'Assets';
};

annotate service.AddressUTxOs with @(
  UI.HeaderInfo : { TypeName: 'UTxO', TypeNamePlural: 'UTxOs', Title: { Value: txHash }, Description: { Value: outputIndex } },
  UI.SelectionFields : [ address ],
  UI.LineItem : [ { Value: txHash }, { Value: outputIndex }, { Value: address }, { Value: lovelace }, { Value: dataHash } ]
) {
  txHash      @title: 'Transaction Hash';
  outputIndex @title: 'Output';
  address     @title: 'Address'  @Common.ValueList: {
    Label: 'Addresses', CollectionPath: 'Addresses',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: address, ValueListProperty: 'address' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'type' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'totalLovelace' }
    ]
  };
  lovelace    @title: 'Amount (lovelace)';
  blockHash   @title: 'Block Hash';
  dataHash    @title: 'Datum Hash';
};

annotate service.AddressAssets with @(
  UI.HeaderInfo : { TypeName: 'Asset', TypeNamePlural: 'Assets', Title: { Value: fingerprint }, Description: { Value: assetName } },
  UI.SelectionFields : [ address, policyId ],
  UI.LineItem : [ { Value: fingerprint }, { Value: assetName }, { Value: policyId }, { Value: quantity }, { Value: address } ]
) {
  address      @title: 'Address'  @Common.ValueList: {
    Label: 'Addresses', CollectionPath: 'Addresses',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: address, ValueListProperty: 'address' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'type' }
    ]
  };
  unit         @title: 'Unit';
  policyId     @title: 'Policy ID';
  assetNameHex @title: 'Asset Name (hex)';
  assetName    @title: 'Asset Name';
  fingerprint  @title: 'Fingerprint';
  quantity     @title: 'Quantity';
};

annotate service.AddressTransactions with @(
  UI.HeaderInfo : { TypeName: 'Address Transaction', TypeNamePlural: 'Address Transactions', Title: { Value: txHash }, Description: { Value: address } },
  UI.SelectionFields : [ address ],
  UI.LineItem : [ { Value: txHash }, { Value: blockHeight }, { Value: blockTime }, { Value: txIndex } ],
  UI.PresentationVariant : { SortOrder: [ { Property: blockHeight, Descending: true } ] }
) {
  address     @title: 'Address';
  txHash      @title: 'Transaction Hash'  @Common.ValueList: {
    Label: 'Transactions', CollectionPath: 'Transactions',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: txHash, ValueListProperty: 'hash' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'blockHeight' }
    ]
  };
  txIndex     @title: 'Index in Block';
  blockHeight @title: 'Block Height';
  blockTime   @title: 'Block Time';
};

annotate service.UTxOAssets with @(
  UI.HeaderInfo : { TypeName: 'UTxO Asset', TypeNamePlural: 'UTxO Assets', Title: { Value: fingerprint }, Description: { Value: assetName } },
  UI.LineItem : [ { Value: fingerprint }, { Value: assetName }, { Value: policyId }, { Value: quantity } ]
) {
  txHash       @title: 'Transaction Hash';
  outputIndex  @title: 'Output';
  unit         @title: 'Unit';
  address      @title: 'Address';
  policyId     @title: 'Policy ID';
  assetNameHex @title: 'Asset Name (hex)';
  assetName    @title: 'Asset Name';
  fingerprint  @title: 'Fingerprint';
  quantity     @title: 'Quantity';
};

annotate service.Accounts with @(
  UI.HeaderInfo : { TypeName: 'Stake Account', TypeNamePlural: 'Stake Accounts', Title: { Value: stakeAddress }, Description: { Value: poolId } },
  UI.SelectionFields : [ poolId, drepId, active ],
  UI.LineItem : [
    { Value: stakeAddress }, { Value: active }, { Value: controlledAmount }, { Value: withdrawableAmount }, { Value: poolId }, { Value: drepId }
  ],
  UI.FieldGroup #Account : { Data: [
    { Value: stakeAddress }, { Value: active }, { Value: activeEpoch }, { Value: controlledAmount }, { Value: rewardsSum },
    { Value: withdrawalsSum }, { Value: reservesSum }, { Value: treasurySum }, { Value: withdrawableAmount }, { Value: poolId }, { Value: drepId }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Account', Label: 'Stake Account', Target: '@UI.FieldGroup#Account' },
    { $Type: 'UI.ReferenceFacet', ID: 'Addresses', Label: 'Addresses', Target: 'addresses/@UI.LineItem' }
  ]
) {
  stakeAddress       @title: 'Stake Address';
  active             @title: 'Registered';
  activeEpoch        @title: 'Active Since Epoch';
  controlledAmount   @title: 'Controlled (lovelace)';
  rewardsSum         @title: 'Rewards (lovelace)';
  withdrawalsSum     @title: 'Withdrawals (lovelace)';
  reservesSum        @title: 'From Reserves (lovelace)';
  treasurySum        @title: 'From Treasury (lovelace)';
  withdrawableAmount @title: 'Withdrawable (lovelace)';
  poolId             @title: 'Delegated to Pool'  @Common.ValueList: {
    Label: 'Pools', CollectionPath: 'Pools',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: poolId, ValueListProperty: 'poolId' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'ticker' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'name' }
    ]
  };
  drepId             @title: 'Delegated to DRep'  @Common.ValueList: {
    Label: 'DReps', CollectionPath: 'Dreps',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: drepId, ValueListProperty: 'drepId' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'amount' }
    ]
  };
};

// ---------------------------------------------------------------------------------------------
// Stake pools and DReps

annotate service.Pools with @(
  UI.HeaderInfo : { TypeName: 'Stake Pool', TypeNamePlural: 'Stake Pools', Title: { Value: ticker }, Description: { Value: poolId } },
  UI.SelectionFields : [ ticker, retiring ],
  UI.LineItem : [
    { Value: ticker }, { Value: name }, { Value: liveStake }, { Value: liveSaturation }, { Value: margin }, { Value: blocksMinted }, { Value: liveDelegators }
  ],
  UI.FieldGroup #Pool : { Data: [
    { Value: poolId }, { Value: ticker }, { Value: name }, { Value: homepage }, { Value: description }, { Value: retiring }
  ] },
  UI.FieldGroup #Stake : { Data: [
    { Value: liveStake }, { Value: liveSize }, { Value: liveSaturation }, { Value: liveDelegators }, { Value: activeStake },
    { Value: activeSize }, { Value: blocksMinted }, { Value: blocksEpoch }
  ] },
  UI.FieldGroup #Terms : { Data: [
    { Value: pledge }, { Value: livePledge }, { Value: margin }, { Value: fixedCost }, { Value: rewardAccount }, { Value: owners }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Pool', Label: 'Pool', Target: '@UI.FieldGroup#Pool' },
    { $Type: 'UI.ReferenceFacet', ID: 'Stake', Label: 'Stake and Blocks', Target: '@UI.FieldGroup#Stake' },
    { $Type: 'UI.ReferenceFacet', ID: 'Terms', Label: 'Pledge and Fees', Target: '@UI.FieldGroup#Terms' },
    { $Type: 'UI.ReferenceFacet', ID: 'Delegators', Label: 'Delegators', Target: 'delegators/@UI.LineItem' }
  ]
) {
  poolId         @title: 'Pool ID';
  hex            @title: 'Pool ID (hex)';
  vrfKey         @title: 'VRF Key Hash';
  ticker         @title: 'Ticker';
  name           @title: 'Name';
  homepage       @title: 'Homepage';
  description    @title: 'Description';
  blocksMinted   @title: 'Blocks Minted';
  blocksEpoch    @title: 'Blocks this Epoch';
  liveStake      @title: 'Live Stake (lovelace)';
  liveSize       @title: 'Live Stake Share';
  liveSaturation @title: 'Saturation';
  liveDelegators @title: 'Delegators';
  activeStake    @title: 'Active Stake (lovelace)';
  activeSize     @title: 'Active Stake Share';
  pledge         @title: 'Pledge (lovelace)';
  livePledge     @title: 'Live Pledge (lovelace)';
  margin         @title: 'Margin';
  fixedCost      @title: 'Fixed Cost (lovelace)';
  rewardAccount  @title: 'Reward Account';
  owners         @title: 'Owners (JSON)';
  retiring       @title: 'Retiring';
};

annotate service.Dreps with @(
  UI.HeaderInfo : { TypeName: 'DRep', TypeNamePlural: 'DReps', Title: { Value: drepId }, Description: { Value: amount } },
  UI.SelectionFields : [ retired, expired, hasScript ],
  UI.LineItem : [ { Value: drepId }, { Value: amount }, { Value: lastActiveEpoch }, { Value: retired }, { Value: expired } ],
  UI.FieldGroup #Drep : { Data: [
    { Value: drepId }, { Value: hex }, { Value: amount }, { Value: hasScript }, { Value: retired }, { Value: expired }, { Value: lastActiveEpoch }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Drep', Label: 'DRep', Target: '@UI.FieldGroup#Drep' },
    { $Type: 'UI.ReferenceFacet', ID: 'Delegators', Label: 'Delegators', Target: 'delegators/@UI.LineItem' }
  ]
) {
  drepId          @title: 'DRep ID';
  hex             @title: 'DRep ID (hex)';
  amount          @title: 'Voting Power (lovelace)';
  hasScript       @title: 'Script DRep';
  retired         @title: 'Retired';
  expired         @title: 'Expired';
  lastActiveEpoch @title: 'Last Active Epoch';
};

// ---------------------------------------------------------------------------------------------
// Native assets' mint and burn history; network and protocol parameters

annotate service.AssetHistory with @(
  UI.HeaderInfo : { TypeName: 'Mint or Burn', TypeNamePlural: 'Asset History', Title: { Value: unit }, Description: { Value: action } },
  UI.SelectionFields : [ unit, action ],
  UI.LineItem : [ { Value: unit }, { Value: action }, { Value: amount }, { Value: txHash } ],
  UI.PresentationVariant : { SortOrder: [ { Property: position } ] }
) {
  unit     @title: 'Asset Unit';
  txHash   @title: 'Transaction Hash'  @Common.ValueList: {
    Label: 'Transactions', CollectionPath: 'Transactions',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: txHash, ValueListProperty: 'hash' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'blockHeight' }
    ]
  };
  position @title: 'Position (newest first)';
  action   @title: 'Action';
  amount   @title: 'Amount';
};

annotate service.NetworkInformation with @(
  UI.HeaderInfo : { TypeName: 'Network', TypeNamePlural: 'Networks', Title: { Value: network } },
  UI.LineItem : [ { Value: network }, { Value: networkMagic }, { Value: circulatingSupply }, { Value: liveStake }, { Value: activeStake }, { Value: epochLength } ]
) {
  network           @title: 'Network';
  networkMagic      @title: 'Network Magic';
  maxSupply         @title: 'Max Supply (lovelace)';
  totalSupply       @title: 'Total Supply (lovelace)';
  circulatingSupply @title: 'Circulating Supply (lovelace)';
  liveStake         @title: 'Live Stake (lovelace)';
  activeStake       @title: 'Active Stake (lovelace)';
  systemStart       @title: 'System Start';
  epochLength       @title: 'Epoch Length (slots)';
  slotLength        @title: 'Slot Length (s)';
  securityParam     @title: 'Security Parameter';
};

annotate service.LedgerProtocolParameters with @(
  UI.HeaderInfo : { TypeName: 'Protocol Parameters', TypeNamePlural: 'Protocol Parameters', Title: { Value: epoch } },
  UI.LineItem : [ { Value: epoch }, { Value: minFeeA }, { Value: minFeeB }, { Value: maxTxSize }, { Value: keyDeposit }, { Value: protocolMajorVer } ]
) {
  epoch            @title: 'Epoch';
  minFeeA          @title: 'Fee per Byte';
  minFeeB          @title: 'Fixed Fee';
  maxTxSize        @title: 'Max Transaction Size';
  maxBlockSize     @title: 'Max Block Size';
  keyDeposit       @title: 'Key Deposit (lovelace)';
  poolDeposit      @title: 'Pool Deposit (lovelace)';
  protocolMajorVer @title: 'Protocol Version';
};
